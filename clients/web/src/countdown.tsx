import { useEffect, useState } from "preact/hooks";

/** Seconds left until `until` (ms since the epoch), ticking. */
export function Countdown({ until }: { until: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(t);
  }, [until]);
  const left = Math.max(0, until - now) / 1000;
  return (
    <span class={`countdown${left < 2 ? " low" : ""}`} role="timer" aria-label={`${left.toFixed(0)} seconds left`}>
      {left.toFixed(1)} s
    </span>
  );
}
