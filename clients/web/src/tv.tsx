// TV mode: a live table, and when its match ends, the next live one (the most recent first).
import { useEffect, useState } from "preact/hooks";
import { tables } from "./api";
import { TableState } from "./gen/bete/v1/table_pb";
import { LiveTable } from "./table";
import { errorText } from "./errors";

/** How long a finished match stays on screen before the next table. */
const LINGER_MS = 4000;
const LOOK_MS = 3000;

export function Tv() {
  const [id, setId] = useState<string | null>(null);
  const [seen] = useState(() => new Set<string>());
  const [wanted, setWanted] = useState(0);
  const [note, setNote] = useState("looking for a live table…");
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const look = async () => {
      try {
        const r = await tables.listTables({ state: TableState.PLAYING, pageSize: 50 });
        if (stop) return;
        const next = r.tables.find((t) => !seen.has(t.tableId)) ?? r.tables[0];
        if (next) { seen.add(next.tableId); setId(next.tableId); return; }
        setNote("no live table right now; looking again…");
      } catch (e) { if (!stop) setNote(errorText(e)); }
      if (!stop) timer = setTimeout(look, LOOK_MS);
    };
    look();
    return () => { stop = true; clearTimeout(timer); };
  }, [wanted]);
  return (
    <>
      <p class="meta tvbar" data-testid="tv">TV: following live tables; the next one comes when a match ends. <a href="#/">back to the lobby</a></p>
      {id ? <LiveTable key={id} id={id} onOver={() => setTimeout(() => { setId(null); setWanted((n) => n + 1); }, LINGER_MS)} /> : <main><p role="status">{note}</p></main>}
    </>
  );
}
