//! What Linux's /proc says about the machine and the server process. Everything here degrades to
//! `None` off Linux or when a file is unreadable: the report then says "unknown" instead of failing.

use std::collections::HashMap;
use std::time::Duration;

/// `USER_HZ`: /proc reports CPU times in these ticks; it is 100 on every Linux architecture that
/// exports it to user space, and reading it via sysconf would need `unsafe`.
const TICKS_PER_SECOND: f64 = 100.0;

/// Facts about the machine the run happened on.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// Logical CPUs this process may use.
    pub cores: usize,
    /// The CPU model from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Total memory from /proc/meminfo, in KiB.
    pub memory_kib: Option<u64>,
    /// The kernel release.
    pub kernel: Option<String>,
    /// /proc/loadavg's 1-minute load when the run started: other work on a shared machine
    /// skews every figure, so the report says how busy it was.
    pub load_1m_at_start: Option<f64>,
}

impl Machine {
    /// Reads the facts now.
    pub fn read() -> Machine {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        });
        let memory_kib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| status_kib(&s, "MemTotal:"));
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string());
        let load_1m_at_start = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()));
        Machine {
            cores,
            cpu_model,
            memory_kib,
            kernel,
            load_1m_at_start,
        }
    }
}

/// The value in KiB of a `Key:   123 kB` line.
fn status_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l[key.len()..].split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// User plus system CPU time from a `stat` file's text (fields 14 and 15). The command name
/// (field 2) may hold spaces and parentheses, so fields are counted after its closing `)`.
fn stat_cpu(text: &str) -> Option<Duration> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // After `)`: state(3) ppid(4) ... utime is field 14, i.e. the 12th here.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / TICKS_PER_SECOND,
    ))
}

/// The CPU time in a thread's `schedstat` (its first field, nanoseconds on the CPU).
fn schedstat_cpu(text: &str) -> Option<Duration> {
    Some(Duration::from_nanos(
        text.split_whitespace().next()?.parse().ok()?,
    ))
}

/// A reading of the server's CPU time.
#[derive(Clone, Debug)]
pub enum CpuMark {
    /// A whole process (its exited threads included).
    Process(Duration),
    /// Threads of this process, by thread id.
    Threads(HashMap<std::ffi::OsString, Duration>),
}

impl CpuMark {
    /// The CPU time of the reading.
    pub fn total(&self) -> Duration {
        match self {
            CpuMark::Process(t) => *t,
            CpuMark::Threads(threads) => threads.values().sum(),
        }
    }

    /// The CPU time used between `earlier` and this reading. Per thread for threads: one that
    /// ended in between (a blocking-pool thread, or another in-process server's when tests run
    /// side by side) drops out of both readings instead of making the window's sum shrink.
    pub fn since(&self, earlier: &CpuMark) -> Duration {
        match (self, earlier) {
            (CpuMark::Threads(now), CpuMark::Threads(then)) => now
                .iter()
                .map(|(tid, c)| c.saturating_sub(then.get(tid).copied().unwrap_or_default()))
                .sum(),
            _ => self.total().saturating_sub(earlier.total()),
        }
    }
}

/// How the harness finds the server's CPU time and memory.
#[derive(Clone, Debug)]
pub enum ServerProc {
    /// A separate process: its own /proc/<pid>.
    Child(u32),
    /// Threads of this process whose names start with one of these prefixes.
    Threads(Vec<&'static str>),
    /// A remote server: nothing to read.
    Remote,
}

impl ServerProc {
    /// CPU time (user + system) the server has used so far.
    pub fn cpu(&self) -> Option<Duration> {
        self.cpu_mark().map(|m| m.total())
    }

    /// The server's CPU time so far, per thread where it runs in this process: the CPU of a
    /// window is the difference of two marks ([`CpuMark::since`]).
    pub fn cpu_mark(&self) -> Option<CpuMark> {
        match self {
            ServerProc::Child(pid) => Some(CpuMark::Process(stat_cpu(
                &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
            )?)),
            ServerProc::Threads(prefixes) => {
                let mut threads = HashMap::new();
                for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
                    let path = entry.path();
                    let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
                        continue;
                    };
                    // schedstat's first field is the thread's CPU time in nanoseconds: a
                    // short window still reads more than whole clock ticks (10 ms) of it.
                    if prefixes.iter().any(|p| comm.starts_with(p))
                        && let Some(c) = std::fs::read_to_string(path.join("schedstat"))
                            .ok()
                            .and_then(|s| schedstat_cpu(&s))
                            .or_else(|| stat_cpu(&std::fs::read_to_string(path.join("stat")).ok()?))
                    {
                        threads.insert(entry.file_name(), c);
                    }
                }
                Some(CpuMark::Threads(threads))
            }
            ServerProc::Remote => None,
        }
    }

    /// Resident memory now, in KiB (child only).
    pub fn rss_kib(&self) -> Option<u64> {
        self.status("VmRSS:")
    }

    /// Peak resident memory, in KiB (child only).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.status("VmHWM:")
    }

    fn status(&self, key: &str) -> Option<u64> {
        match self {
            ServerProc::Child(pid) => status_kib(
                &std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
                key,
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let line =
            "4242 (bete server) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 0 0";
        assert_eq!(stat_cpu(line), Some(Duration::from_secs(3)));
    }

    #[test]
    fn status_lines_give_kib() {
        let text = "Name:\tx\nVmHWM:\t   51200 kB\nVmRSS:\t  40000 kB\n";
        assert_eq!(status_kib(text, "VmHWM:"), Some(51200));
        assert_eq!(status_kib(text, "VmRSS:"), Some(40000));
        assert_eq!(status_kib(text, "VmSwap:"), None);
    }

    #[test]
    fn this_process_is_visible() {
        let me = ServerProc::Child(std::process::id());
        assert!(me.cpu().is_some());
        assert!(me.peak_rss_kib().unwrap() > 0);
        assert!(Machine::read().cores >= 1);
    }
}
