// Replays: a finished table by id, or a record file dropped on the page, stepped by action and
// by deal. The steps (every hand face up) come from ReplayService: the engine runs on the server.
import { useEffect, useState } from "preact/hooks";
import { createClient } from "@connectrpc/connect";
import { tables, transport } from "./api";
import { ReplayService, type DecisionAnalysis } from "./gen/bete/v1/replay_service_pb";
import type { AnalyseTableResponse, ReplayRecordResponse } from "./gen/bete/v1/replay_service_pb";
import { Board } from "./board";
import { RulesPanel } from "./rules";
import { actionText, describe, rulesetName, signed } from "./format";
import { errorText } from "./errors";

/** The largest record file the page sends (the server's request limit is 64 KiB by default). */
const MAX_FILE = 1024 * 1024;
const replays = createClient(ReplayService, transport);

/** Autoplay speeds, in steps a second. */
const SPEEDS = [0.5, 1, 2, 4, 8];

/** Costs from which a move is marked on the step bar, in jetons. */
const MISTAKE = 0.5;
const BLUNDER = 2;

/** The analysed decisions that cost something, as marks along the step bar. */
function Marks({ decisions, last, name, go }: { decisions: DecisionAnalysis[]; last: number; name: (s: number) => string; go: (step: number) => void }) {
  const marked = decisions.filter((d) => d.cost >= MISTAKE);
  return (
    <span class="marks" data-testid="analysis-marks" aria-label="costly moves">
      {marked.map((d) => (
        <button
          key={d.step}
          type="button"
          class={`mark${d.cost >= BLUNDER ? " blunder" : ""}`}
          style={{ left: `${(d.step / Math.max(1, last)) * 100}%` }}
          title={`step ${d.step}: ${name(d.seat)} ${actionText(d.played)}; search: ${actionText(d.best)} (about ${d.cost.toFixed(2)} jetons)`}
          aria-label={`step ${d.step}, cost ${d.cost.toFixed(1)} jetons`}
          onClick={() => go(d.step)}
        />
      ))}
    </span>
  );
}

export function Replay({ id, step: stepInUrl }: { id?: string; step?: string }) {
  const [input, setInput] = useState(id ?? "");
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(2);
  const [analysis, setAnalysis] = useState<AnalyseTableResponse | null>(null);
  const [analysing, setAnalysing] = useState("");
  const [replay, setReplay] = useState<ReplayRecordResponse | null>(null);
  const [names, setNames] = useState<string[]>([]);
  const [step, setStep] = useState(0);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);

  const load = async (source: { case: "tableId"; value: string } | { case: "recordJson"; value: string }, label: string) => {
    setBusy(true);
    setError("");
    try {
      const r = await replays.replayRecord({ source });
      setReplay(r);
      setAnalysis(null);
      setAnalysing("");
      const wanted = source.case === "tableId" ? Number(stepInUrl ?? 0) : 0;
      setStep(Number.isInteger(wanted) && wanted >= 0 && wanted < r.steps.length ? wanted : 0);
      setPlaying(false);
      setNames([]);
      if (source.case === "tableId") {
        // The names are a nicety: the replay stands without them.
        tables.getTable({ tableId: source.value }).then((r) => setNames(r.table?.seats.map((s) => s.botName) ?? []), () => {});
      }
    } catch (e) {
      setReplay(null);
      setError(`${label}: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    if (id) { setInput(id); load({ case: "tableId", value: id }, `table ${id}`); }
  }, [id]);

  const readFile = async (f: File | undefined) => {
    if (!f) return;
    if (f.size > MAX_FILE) { setError(`${f.name}: the file is ${f.size} bytes, too large for a record`); return; }
    const text = await f.text();
    load({ case: "recordJson", value: text }, f.name);
  };

  const steps = replay?.steps ?? [];
  const cur = steps[step];
  const last = steps.length - 1;
  // The step in the URL (#/replay/<table>/<step>), so a position can be linked to; replaced,
  // not pushed, so Back leaves the replay rather than stepping it.
  useEffect(() => {
    if (!replay || !id) return;
    const want = `#/replay/${encodeURIComponent(id)}/${step}`;
    if (location.hash !== want) history.replaceState(null, "", want);
  }, [step, replay, id]);
  // A step typed into the URL (or a link followed) while the replay is open.
  useEffect(() => {
    const n = Number(stepInUrl);
    if (replay && stepInUrl !== undefined && Number.isInteger(n) && n >= 0 && n <= last) setStep(n);
  }, [stepInUrl]);
  // Autoplay: one step every 1/speed seconds, stopping at the end.
  useEffect(() => {
    if (!playing) return;
    if (step >= last) { setPlaying(false); return; }
    const t = setTimeout(() => setStep((s) => Math.min(last, s + 1)), 1000 / speed);
    return () => clearTimeout(t);
  }, [playing, step, speed, last]);
  // Each deal: its first step and how it ended.
  const deals: { deal: number; first: number; result: string }[] = [];
  steps.forEach((st, i) => {
    if (!deals.length || deals[deals.length - 1].deal !== st.deal) deals.push({ deal: st.deal, first: i, result: "" });
    for (const e of st.events) {
      const b = e.body;
      if (b.case === "dealSettled") {
        const d = deals.find((d) => d.deal === b.value.deal);
        if (d) d.result = describe(e, (s) => `#${s + 1} ${names[s] ?? ""}`.trim());
      }
    }
  });
  const dealStart = (from: number, dir: 1 | -1) => {
    if (!cur) return from;
    const deal = steps[from].deal;
    let i = from;
    if (dir > 0) { while (i < last && steps[i].deal === deal) i++; return i; }
    // Back: to the start of this deal, or of the previous one when already at its start.
    while (i > 0 && steps[i - 1].deal === deal) i--;
    if (i === from && i > 0) { const prev = steps[i - 1].deal; i--; while (i > 0 && steps[i - 1].deal === prev) i--; }
    return i;
  };
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (!replay || (e.target as HTMLElement)?.tagName === "INPUT") return;
      if (e.key === "ArrowRight") { setStep((s) => Math.min(last, s + 1)); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { setStep((s) => Math.max(0, s - 1)); e.preventDefault(); }
      else if (e.key === "PageDown") { setStep((s) => dealStart(s, 1)); e.preventDefault(); }
      else if (e.key === "PageUp") { setStep((s) => dealStart(s, -1)); e.preventDefault(); }
      else if (e.key === "Home") { setStep(0); e.preventDefault(); }
      else if (e.key === "End") { setStep(last); e.preventDefault(); }
    };
    addEventListener("keydown", key);
    return () => removeEventListener("keydown", key);
  }, [replay, last, step]);

  const name = (s: number) => `#${s + 1} ${names[s] ?? ""}`.trim();
  const analyse = async () => {
    if (!id) return;
    setAnalysing("analysing with the search policy (a few seconds)…");
    try {
      const a = await replays.analyseTable({ tableId: id, budgetMs: 5000 });
      setAnalysis(a);
      setAnalysing("");
    } catch (e) {
      setAnalysing(`analysis: ${errorText(e)}`);
    }
  };
  const here = analysis?.decisions.find((d) => d.step === step);
  return (
    <main
      class={dragging ? "dropping" : ""}
      onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => { e.preventDefault(); setDragging(false); readFile(e.dataTransfer?.files[0]); }}
    >
      <h1>Replay</h1>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); const v = input.trim(); if (v) location.hash = `#/replay/${v}`; }}>
        <label>Finished table <input value={input} onInput={(e) => setInput(e.currentTarget.value)} placeholder="t_…" data-testid="replay-id" /></label>
        <button type="submit">Replay</button>
        <label class="file">or a record file (bete-record/1 JSON; drop it anywhere on the page) <input type="file" accept=".json,application/json" onChange={(e) => readFile(e.currentTarget.files?.[0])} data-testid="replay-file" /></label>
      </form>
      {busy ? <p role="status">replaying…</p> : null}
      {error ? <p class="error" role="alert" data-testid="replay-error">{error}</p> : null}
      {replay && cur ? (
        <>
          <p class="meta">{rulesetName(replay.ruleset)} · {replay.seats} seats · {steps.length - 1} actions · final {replay.balances.map((b, i) => `${name(i)} ${signed(b)}`).join(", ")}</p>
          <RulesPanel ruleset={replay.ruleset} />
          <nav class="steps" aria-label="replay steps">
            <button onClick={() => setStep(dealStart(step, -1))} disabled={step === 0} aria-label="previous deal" title="previous deal (Page Up)">« deal</button>
            <button onClick={() => setStep(Math.max(0, step - 1))} disabled={step === 0} aria-label="previous action" title="previous action (←)" data-testid="step-back">◀ action</button>
            <input type="range" min={0} max={last} value={step} onInput={(e) => setStep(Number(e.currentTarget.value))} aria-label="step" />
            <button onClick={() => setStep(Math.min(last, step + 1))} disabled={step === last} aria-label="next action" title="next action (→)" data-testid="step-forward">action ▶</button>
            <button onClick={() => setStep(dealStart(step, 1))} disabled={step === last} aria-label="next deal" title="next deal (Page Down)" data-testid="deal-forward">deal »</button>
            {analysis ? <Marks decisions={analysis.decisions} last={last} name={name} go={(n) => { setPlaying(false); setStep(n); }} /> : null}
            <span data-testid="step" aria-live="polite">step {step} of {last} · deal {cur.deal + 1} of {deals.length}</span>
          </nav>
          <p class="steps">
            <button type="button" onClick={() => { if (step >= last) setStep(0); setPlaying(!playing); }} data-testid="autoplay" aria-pressed={playing}>{playing ? "❚❚ pause" : "▶ play"}</button>
            <label>speed <select value={speed} onChange={(e) => setSpeed(Number(e.currentTarget.value))} data-testid="speed">
              {SPEEDS.map((v) => <option key={v} value={v}>{v} step{v === 1 ? "" : "s"}/s</option>)}
            </select></label>
            {id ? <button type="button" onClick={analyse} disabled={!!analysis || analysing.startsWith("analysing")} data-testid="analyse">Analyse with search</button> : null}
            {analysing ? <span role="status">{analysing}</span> : null}
            {analysis ? <span data-testid="analysis-summary">{analysis.decisions.length} decisions analysed{analysis.complete ? "" : " (the time ran out before the end)"}; {analysis.decisions.filter((d) => d.cost >= MISTAKE).length} marked on the bar</span> : null}
          </p>
          <p class="acted" data-testid="acted">
            {cur.seat === undefined ? "The first deal is dealt." : `${name(cur.seat)} ${actionText(cur.action)}${cur.auto ? " (auto-move)" : ""}.`}
            {here ? <span class="verdict" data-testid="verdict"> Search {here.best?.text === here.played?.text ? "agrees" : <>would play <b>{actionText(here.best)}</b>; this cost about {here.cost.toFixed(2)} jetons</>} ({here.samples} sampled deals).</span> : null}
          </p>
          {cur.view ? <Board view={cur.view} names={names} hands={cur.hands.map((h) => h.cards)} deals={{ count: deals.length, planned: false }} /> : null}
          <details class="deals" open={deals.length <= 12}>
            <summary>Deals ({deals.length})</summary>
            <ol data-testid="deals">
              {deals.map((d) => (
                <li key={d.deal} class={d.deal === cur.deal ? "current" : ""}>
                  <button type="button" class="linkish" onClick={() => { setPlaying(false); setStep(d.first); }}>Deal {d.deal + 1}</button>{" "}
                  <span class="meta">{d.result || "not settled"}</span>
                </li>
              ))}
            </ol>
          </details>
          <section class="log" aria-label="events of this step">
            <h2>What happened</h2>
            <ul>{cur.events.map((e, i) => { const t = describe(e, name); return t ? <li key={i}>{t}</li> : null; })}</ul>
          </section>
        </>
      ) : null}
    </main>
  );
}
