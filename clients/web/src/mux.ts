// The page's calls on one WebSocket per tab (the server side: service/server/src/web_mux.rs).
//
// Over plain HTTP/1.1 a browser opens at most six connections to a server and each live stream
// holds one, so a seventh tab following a table waited forever. A WebSocket is not counted in
// that limit: every gRPC-Web call of the tab goes as frames on one socket, through a `fetch`
// given to connect-web's gRPC-Web transport (the encoding is unchanged). Over HTTPS the page uses
// the browser's fetch: HTTP/2 multiplexes by itself.
//
// Frames: kind byte, call id (u32 BE), then: open = u32 length + JSON {path, headers} + body;
// cancel = nothing. From the server: head = JSON {status, headers}; data = bytes; end; fail = text.
// A stream over the server's limit per socket (--web-max-subscriptions) is answered with a head
// holding a gRPC status (RESOURCE_EXHAUSTED, TOO_MANY_STREAMS, the limit in its message): connect
// raises it as a ConnectError and each page shows its message where it shows the stream's state.

const OPEN = 1, CANCEL = 2;
const HEAD = 1, DATA = 2, END = 3, FAIL = 4;

interface Call {
  head: (r: Response) => void;
  fail: (e: unknown) => void;
  body: ReadableStreamDefaultController<Uint8Array> | null;
  answered: boolean;
}

/** A fetch whose requests travel on one WebSocket to `base` (http://host:port). */
export function muxFetch(base: string): typeof fetch {
  const url = base.replace(/^http/, "ws").replace(/\/$/, "") + "/bete.web/mux";
  let socket: WebSocket | null = null;
  let ready: Promise<WebSocket> | null = null;
  let nextId = 1;
  const calls = new Map<number, Call>();

  const lost = (why: string) => {
    // "Failed to fetch": connect reports it as it would a fetch that failed (server unreachable).
    for (const c of calls.values()) {
      const e = new TypeError(`Failed to fetch (${why})`);
      if (!c.answered) c.fail(e);
      else try { c.body?.error(e); } catch { /* already closed */ }
    }
    calls.clear();
    socket = null;
    ready = null;
  };

  const open = (): Promise<WebSocket> => {
    if (ready) return ready;
    ready = new Promise((ok, fail) => {
      const ws = new WebSocket(url);
      ws.binaryType = "arraybuffer";
      ws.onopen = () => { socket = ws; ok(ws); };
      ws.onerror = () => fail(new TypeError("Failed to fetch (the server cannot be reached)"));
      ws.onclose = () => { if (socket === ws || socket === null) lost("connection closed"); };
      ws.onmessage = (m) => {
        const b = new Uint8Array(m.data as ArrayBuffer);
        if (b.length < 5) return;
        const id = new DataView(b.buffer, b.byteOffset).getUint32(1);
        const c = calls.get(id);
        if (!c) return;
        const rest = b.subarray(5);
        switch (b[0]) {
          case HEAD: {
            const h = JSON.parse(new TextDecoder().decode(rest)) as { status: number; headers: [string, string][] };
            const body = new ReadableStream<Uint8Array>({ start: (ctl) => { c.body = ctl; } });
            c.answered = true;
            c.head(new Response(body, { status: h.status, headers: h.headers }));
            break;
          }
          case DATA: c.body?.enqueue(rest.slice()); break;
          case END: calls.delete(id); try { c.body?.close(); } catch { /* cancelled */ } break;
          case FAIL: {
            calls.delete(id);
            const e = new TypeError(`Failed to fetch (${new TextDecoder().decode(rest)})`);
            if (c.answered) { try { c.body?.error(e); } catch { /* closed */ } } else c.fail(e);
            break;
          }
        }
      };
    });
    ready.catch(() => { ready = null; });
    return ready;
  };

  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) throw signal.reason ?? new DOMException("aborted", "AbortError");
    const headers: [string, string][] = [];
    new Headers(init?.headers).forEach((v, k) => headers.push([k, v]));
    const raw = init?.body;
    const body = raw instanceof Uint8Array ? raw : raw instanceof ArrayBuffer ? new Uint8Array(raw) : raw == null ? new Uint8Array() : new Uint8Array(await new Response(raw as BodyInit).arrayBuffer());
    const ws = await open();
    const id = nextId++;
    const json = new TextEncoder().encode(JSON.stringify({ path: target.pathname, headers }));
    const frame = new Uint8Array(9 + json.length + body.length);
    const dv = new DataView(frame.buffer);
    frame[0] = OPEN;
    dv.setUint32(1, id);
    dv.setUint32(5, json.length);
    frame.set(json, 9);
    frame.set(body, 9 + json.length);
    return new Promise<Response>((ok, fail) => {
      const c: Call = { head: ok, fail, body: null, answered: false };
      calls.set(id, c);
      signal?.addEventListener("abort", () => {
        if (!calls.has(id)) return;
        calls.delete(id);
        const cancel = new Uint8Array(5);
        cancel[0] = CANCEL;
        new DataView(cancel.buffer).setUint32(1, id);
        if (ws.readyState === WebSocket.OPEN) ws.send(cancel);
        const e = signal.reason ?? new DOMException("aborted", "AbortError");
        if (c.answered) { try { c.body?.error(e); } catch { /* closed */ } } else fail(e);
      }, { once: true });
      ws.send(frame);
    });
  };
}
