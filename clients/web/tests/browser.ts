// Browser tests of the page against a real bete-server with house bots, in Debian's Chromium
// driven by playwright-core. Run by scripts/test-web.sh (part of scripts/test.sh, step "web").
//
//   BETE_SERVER=target/debug/bete-server node .test-build/browser.mjs
//
// What it checks: the lobby shows a new house-bot table without a reload; the table page shows
// tricks being played and a deal settling; during a deal no card of any hand reaches the page,
// neither in its network data (every gRPC-Web response decoded by the schema) nor in its DOM;
// the page reconnects and resumes after the server goes away and comes back; a replay steps
// forward and back by action and by deal, and a bad record file gets a clear message; a 7-seat
// table is laid out on a phone screen; frames are measured while a table streams ~100 events/s.
// Issue 28's checks (tests/round2.ts): the first load's bytes on the wire, many tabs at once, a
// lobby behind a hundred finished tables, a settled deal's hands during a match, a taken
// turn-up, real overflow on a phone on every page, seat names, contrast, the ladder's marker
// through an outage, and a whole game played by clicking. Issues 24 and 28 again
// (tests/round3.ts): the ladder's crosstable against GetCrosstable, a friend joining a game by
// its link, a pasted account token, and the WebSocket's limit on live streams shown by the page.
// Screenshots go to target/web-screenshots/ (docs/ with BETE_WEB_SCREENSHOTS=docs).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type CDPSession, type Page } from "playwright-core";
import { fromBinary, toJson, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { BotService } from "../src/gen/bete/v1/bot_service_pb";
import { Ruleset } from "../src/gen/bete/v1/cards_pb";
import {
  TableService,
  GetSeatViewResponseSchema,
  GetTableResponseSchema,
  ListTablesResponseSchema,
  WatchTableResponseSchema,
  GetGameRecordResponseSchema,
} from "../src/gen/bete/v1/table_service_pb";
import { ReplayRecordResponseSchema, ReplayService } from "../src/gen/bete/v1/replay_service_pb";
import { PHONE, contrastAtLeast, firstLoad, manyTabs, phoneOverflow, playByClicking, seatNames } from "./round2";
import { accountTokenPlays, crosstableShown, friendJoinsByLink, subscriptionLimitShown } from "./round3";
import { LadderService } from "../src/gen/bete/v1/ladder_service_pb";
import { HouseBotPolicy, TableState, Visibility } from "../src/gen/bete/v1/table_pb";

const root = resolve(import.meta.dirname, "../../..");
// Screenshots: into target/ (a test rewrites no tracked file); BETE_WEB_SCREENSHOTS=docs
// refreshes the ones docs/web.md shows.
const docs = process.env.BETE_WEB_SCREENSHOTS === "docs" ? join(root, "docs") : join(root, "target", "web-screenshots");
mkdirSync(docs, { recursive: true });
const serverBin = resolve(root, process.env.BETE_SERVER ?? "target/debug/bete-server");
const chromiumPath = process.env.BETE_CHROMIUM ?? "/usr/bin/chromium";

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`FAILED: ${what}`);
}
const step = (s: string) => console.log(`web: ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (a && typeof a === "object" ? ok(a.port) : fail(new Error("no port"))));
    });
  });
}

// --- the server ------------------------------------------------------------------------------
interface Server { proc: ChildProcess; web: string }

async function startServer(dataDir: string, grpcPort: number, webPort: number, metricsPort: number): Promise<Server> {
  const proc = spawn(serverBin, [], {
    env: {
      ...process.env,
      BETE_LISTEN: `127.0.0.1:${grpcPort}`,
      BETE_WEB_LISTEN: `127.0.0.1:${webPort}`,
      BETE_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      BETE_DATA_DIR: dataDir,
      // House bots pause 7 ms a decision: a 7-seat table then streams ~100 events a second.
      BETE_HOUSE_DELAY_MS: "7",
      BETE_HEARTBEAT_SECS: "2",
      RUST_LOG: "warn,bete_server=info,bete_base=info,bete_table=info,bete_cluster=info,bete_ladder_runtime=info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  await new Promise<void>((ok, fail) => {
    const t = setTimeout(() => fail(new Error(`server did not start:\n${log}`)), 60_000);
    proc.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes(`web page: http://127.0.0.1:${webPort}/`)) { clearTimeout(t); ok(); }
    });
    proc.once("exit", (c) => { clearTimeout(t); fail(new Error(`server exited ${c}:\n${log}`)); });
  });
  proc.stderr!.resume();
  return { proc, web: `http://127.0.0.1:${webPort}` };
}

async function stopServer(s: Server) {
  if (s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once("exit", r));
  s.proc.kill("SIGTERM");
  await exited;
}

// --- API calls from the test (gRPC-Web, the page's own protocol) ------------------------------
function api(base: string, token?: string) {
  const auth: Interceptor = (next) => (req) => {
    if (token) req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const transport = createGrpcWebTransport({ baseUrl: base, useBinaryFormat: true, interceptors: [auth] });
  return {
    tables: createClient(TableService, transport),
    bots: createClient(BotService, transport),
    ladders: createClient(LadderService, transport),
    replays: createClient(ReplayService, transport),
  };
}

/** A bot that enters `ladder` and plays the first legal action of every decision it is sent,
 * until `signal` aborts (so the ladder has rated matches to show). */
async function ladderBot(base: string, name: string, ladder: string, signal: AbortSignal) {
  const me = await api(base).bots.registerBot({ name, owner: "scripts/test-web.sh" });
  const c = api(base, me.token);
  await c.ladders.enterLadder({ ladderId: ladder, capacity: 4 });
  (async () => {
    while (!signal.aborted) {
      try {
        for await (const m of c.tables.watchBot({}, { signal })) {
          if (m.kind.case !== "decision") continue;
          const d = m.kind.value;
          const action = d.view?.legalActions[0];
          if (!action) continue;
          c.tables.submitAction({ tableId: m.tableId, action, expectedSeq: d.seq }).catch(() => {});
        }
      } catch { /* the stream broke: open it again */ }
      await sleep(200);
    }
  })();
  return { botId: me.botId, token: me.token };
}

const mine0 = (web: string, token: string) => api(web, token).tables;

async function houseTable(base: string, token: string, seats: number, rounds: number, houseSeats = seats, ruleset = Ruleset.BETE): Promise<string> {
  const { tables } = api(base, token);
  const r = await tables.createTable({
    ruleset,
    seats,
    config: { rounds: String(rounds) },
    decisionDeadlineMs: 60_000,
    visibility: Visibility.LISTED,
    houseBots: Array.from({ length: houseSeats }, (_, i) => ({
      seat: seats - houseSeats + i,
      policy: i % 2 ? HouseBotPolicy.RANDOM : HouseBotPolicy.HEURISTIC,
    })),
  });
  return r.table!.tableId;
}

// --- the page's network data, decoded --------------------------------------------------------
const RESPONSES: Record<string, DescMessage> = {
  "/bete.v1.TableService/WatchTable": WatchTableResponseSchema,
  "/bete.v1.TableService/GetSeatView": GetSeatViewResponseSchema,
  "/bete.v1.TableService/GetTable": GetTableResponseSchema,
  "/bete.v1.TableService/ListTables": ListTablesResponseSchema,
  "/bete.v1.TableService/GetGameRecord": GetGameRecordResponseSchema,
  "/bete.v1.ReplayService/ReplayRecord": ReplayRecordResponseSchema,
};

/** Every gRPC-Web response body the page receives, as bytes per request, via the DevTools
 * protocol's streamed resource content (the page's own fetches, not copies made by the test). */
class Wire {
  private bodies = new Map<string, { method: string; chunks: Buffer[] }>();
  constructor(private cdp: CDPSession) {}
  async start() {
    await this.cdp.send("Network.enable", {});
    this.cdp.on("Network.responseReceived", async (e) => {
      const path = new URL(e.response.url).pathname;
      if (!RESPONSES[path]) return;
      this.bodies.set(e.requestId, { method: path, chunks: [] });
      try {
        const r = await this.cdp.send("Network.streamResourceContent", { requestId: e.requestId });
        if (r.bufferedData) this.bodies.get(e.requestId)!.chunks.unshift(Buffer.from(r.bufferedData, "base64"));
      } catch { /* finished before we asked: loadingFinished gives the body */ }
    });
    this.cdp.on("Network.dataReceived", (e) => {
      const b = this.bodies.get(e.requestId);
      if (b && e.data) b.chunks.push(Buffer.from(e.data, "base64"));
    });
    // Calls on the page's WebSocket (plain HTTP, src/mux.ts): an `open` frame names the call's
    // method; the server's `data` frames carry its response body.
    this.cdp.on("Network.webSocketFrameSent", (e) => {
      if (e.response.opcode !== 2) return;
      const f = Buffer.from(e.response.payloadData, "base64");
      if (f[0] !== 1 || f.length < 9) return;
      const id = f.readUInt32BE(1);
      const len = f.readUInt32BE(5);
      const { path } = JSON.parse(f.subarray(9, 9 + len).toString("utf8")) as { path: string };
      if (RESPONSES[path]) this.bodies.set(`ws:${e.requestId}:${id}`, { method: path, chunks: [] });
    });
    this.cdp.on("Network.webSocketFrameReceived", (e) => {
      if (e.response.opcode !== 2) return;
      const f = Buffer.from(e.response.payloadData, "base64");
      if (f[0] !== 2 || f.length < 5) return;
      this.bodies.get(`ws:${e.requestId}:${f.readUInt32BE(1)}`)?.chunks.push(f.subarray(5));
    });
    // A unary answer often ends before streaming could be asked for: take its whole body.
    this.cdp.on("Network.loadingFinished", async (e) => {
      const b = this.bodies.get(e.requestId);
      if (!b || b.chunks.length) return;
      try {
        const r = await this.cdp.send("Network.getResponseBody", { requestId: e.requestId });
        b.chunks.push(Buffer.from(r.body, r.base64Encoded ? "base64" : "utf8"));
      } catch { /* gone with its page */ }
    });
  }
  /** Every message received so far, decoded, with its method. */
  messages(): { method: string; json: JsonValue }[] {
    const out: { method: string; json: JsonValue }[] = [];
    for (const { method, chunks } of this.bodies.values()) {
      const buf = Buffer.concat(chunks);
      let i = 0;
      while (i + 5 <= buf.length) {
        const flag = buf[i];
        const len = buf.readUInt32BE(i + 1);
        if (i + 5 + len > buf.length) break;
        if (flag === 0) {
          const msg = fromBinary(RESPONSES[method], buf.subarray(i + 5, i + 5 + len));
          out.push({ method, json: toJson(RESPONSES[method], msg) });
        }
        i += 5 + len;
      }
    }
    return out;
  }
}

const CARD = /^[2-9TJQKA][SHDC]$/;
/** Where a spectator may see a card while a deal is on: public facts only. */
const PUBLIC = [/\.turnUp$/, /\.setAsideTurnUps$/, /\.curieuse\.setAside$/, /\.plays\.card$/, /\.cardPlayed\.card$/, /\.flushShown\.cards$/, /\.dealSettled\./];

/** Every card in `json` with its path (array indices dropped). */
function cardsIn(json: JsonValue, path = ""): { path: string; card: string }[] {
  if (typeof json === "string") return CARD.test(json) ? [{ path, card: json }] : [];
  if (Array.isArray(json)) return json.flatMap((v) => cardsIn(v, path));
  if (json && typeof json === "object") return Object.entries(json).flatMap(([k, v]) => cardsIn(v, `${path}.${k}`));
  return [];
}

// --- the browser ------------------------------------------------------------------------------
async function launch(): Promise<Browser> {
  // No --user-data-dir here: playwright-core gives every launch a fresh temporary profile of
  // its own (and refuses the flag, wanting launchPersistentContext, which allows one context).
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}

async function domCards(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const codes = [...document.querySelectorAll("[data-card]")].map((e) => e.getAttribute("data-card") ?? "");
    return codes;
  });
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "bete-web-"));
  const [grpcPort, webPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  let server = await startServer(dataDir, grpcPort, webPort, metricsPort);
  const browser = await launch();
  const results: Record<string, unknown> = {};
  try {
    const { bots } = api(server.web);
    const me = await bots.registerBot({ name: "web-test", owner: "scripts/test-web.sh" });
    const token = me.token;
    const name = me.botId;

    // 0. The first load over the wire: precompressed, under 60 KB.
    const load = await firstLoad(browser, server.web);
    results.first_load = load;
    step(`first load: ${load.total} bytes on the wire (${load.files.map((f) => `${f.url.replace(server.web, "")} ${f.bytes} B ${f.encoding}`).join(", ")})`);
    check(load.files.some((f) => /\.js$/.test(f.url) && ["br", "gzip"].includes(f.encoding)), "the script goes compressed");
    check(load.total < 60_000, `the first load is under 60 KB on the wire (${load.total} bytes)`);

    // 1. The lobby, then a house-bot table appears in it without a reload.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on("pageerror", (e) => { throw new Error(`page error: ${e}`); });
    const pageWire = new Wire(await context.newCDPSession(page));
    await pageWire.start();
    await page.goto(`${server.web}/`);
    await page.getByRole("heading", { name: "Tables" }).waitFor();
    // A fresh server (default --house-tables 2) already shows live house-bot tables.
    await page.locator("tr[data-table]").nth(1).waitFor({ timeout: 15_000 });
    step("a fresh server's lobby shows its showcase tables");
    const live = await houseTable(server.web, token, 4, 20);
    await page.locator(`tr[data-table="${live}"]`).waitFor({ timeout: 10_000 });
    step(`lobby shows ${live} without a reload`);
    // Filters: by ruleset (Beast shows none of these Bête tables), then back to any.
    await page.getByTestId("filter-ruleset").selectOption(String(Ruleset.BEAST));
    await page.locator(`tr[data-table="${live}"]`).waitFor({ state: "detached" });
    await page.getByTestId("filter-ruleset").selectOption(String(Ruleset.UNSPECIFIED));
    await page.getByTestId("filter-state").selectOption(String(TableState.PLAYING));
    await page.locator(`tr[data-table="${live}"]`).waitFor();
    await houseTable(server.web, token, 5, 20);
    await houseTable(server.web, token, 3, 1);
    await sleep(2500);
    await page.screenshot({ path: join(docs, "web-lobby.png") });

    // 2. Into the table with the keyboard: tricks are played, a deal settles.
    await page.locator(`tr[data-table="${live}"] a`).first().focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: `Table ${live}` }).waitFor();
    await page.locator('[data-testid="trick"] [data-card]').first().waitFor({ timeout: 20_000 });
    step("tricks are played on the table page");
    await page.locator('[data-testid="log"] li', { hasText: "settled" }).first().waitFor({ timeout: 30_000 });
    step("a deal settles");
    await page.screenshot({ path: join(docs, "web-table.png"), fullPage: true });
    await seatNames(page, "a 4-seat table");
    const dealOf = await page.getByTestId("deal-of").innerText();
    check(/^Deal \d+ of 80$/.test(dealOf), `"deal N of M" on a live table (4 seats × 20 rounds): ${dealOf}`);
    // A settled deal's hands, face up, while the match goes on (its next deal starts in the
    // same batch of events as the settlement).
    await page.locator('[data-testid="settled"] [data-card]').first().waitFor({ timeout: 30_000 });
    check((await page.getByTestId("conn").innerText()).includes("live"), "the settled hands are shown while the match is live");
    // (How many cards a reveal holds depends on how the deal ended; at least one hand's. The
    // house plays fast: a later deal, one that ended before any card was played, may settle
    // between two looks, so look again until a settled deal with its hands is on the page.)
    // The two texts are read one after the other: a deal settling between the reads shows the
    // new settlement beside the board's earlier deal, so look again until one look agrees.
    let settledDeal = "";
    let boardNow = "";
    let upCards = 0;
    let settledN = 0;
    let boardN = 0;
    for (let i = 0; i < 60 && (upCards < 5 || !(settledN < boardN)); i++) {
      if (i > 0) await sleep(500);
      settledDeal = await page.getByTestId("settled").locator("h2").innerText();
      boardNow = await page.locator(".board .status").innerText();
      upCards = await page.locator('[data-testid="settled"] [data-card]').count();
      settledN = Number(settledDeal.match(/Deal (\d+)/)?.[1]);
      boardN = Number(boardNow.match(/Deal (\d+)/)?.[1]);
    }
    check(upCards >= 5, `the settled deal's hands face up (${upCards} cards; ${settledDeal}; now ${boardNow})`);
    check(settledN < boardN, `the settled deal is shown while the next is played (${settledN} < ${boardN})`);
    step(`a settled deal's hands are shown during the match (${settledDeal}, board at "${boardNow.slice(0, 30)}")`);

    // Rules and words: the ruleset's panel links the rulebook the server serves; the pools'
    // words carry their meaning.
    await page.getByTestId("rules").locator("summary").click();
    const rulesHref = await page.getByTestId("rules").locator('a[href="/RULES.md"]').getAttribute("href");
    const rulebook = await (await fetch(`${server.web}${rulesHref}`)).text();
    check(rulebook.startsWith("# The rulebook"), "the rules panel links the rulebook, served by the server");
    check(await page.locator(".pools abbr.term[title]").count() > 0, "the pools' words have glossary hints");
    await page.goto(`${server.web}/#/glossary`);
    for (const w of ["Muss", "bête queue", "fiches", "heaps"]) await page.getByTestId("glossary").getByText(w, { exact: true }).waitFor();
    step("a rules panel per ruleset with the rulebook; glossary hints and a glossary page");

    // TV mode: follows a short match, then the next live table when it ends.
    const short = await houseTable(server.web, token, 3, 4);
    await page.goto(`${server.web}/#/tv`);
    const firstTv = (await page.getByRole("heading", { name: /^Table / }).innerText()).trim();
    check(firstTv === `Table ${short}`, `TV opens on the newest live table (${firstTv}, wanted ${short})`);
    await page.waitForFunction((was) => { const h = document.querySelector("h1")?.textContent ?? ""; return h.startsWith("Table ") && h !== was; }, firstTv, { timeout: 60_000 });
    step(`TV mode moved on from ${short} to ${await page.locator("h1").innerText()} when its match ended`);

    // 2b. Many tabs: eight table pages at once in one browser, each a table made for it (the
    // first table of the run, `live`, may have finished by now: its tab then says "match
    // over", never "live", the CI flake).
    const tabs: string[] = [];
    for (let i = 0; i < 8; i++) tabs.push(await houseTable(server.web, token, 3, 20));
    await manyTabs(browser, server.web, tabs);
    // 2b'. The tab's WebSocket refuses a stream over its limit, and the table page says so.
    results.subscription_limit = await subscriptionLimitShown(browser, server.web, await houseTable(server.web, token, 4, 20));

    // 2c. The lobby behind more than a hundred finished tables: the live ones still come first,
    // under a counter that tells them apart.
    // The old live table: our own bot holds a seat and never acts (a minute a decision).
    const old = await houseTable(server.web, token, 3, 1, 2);
    await mine0(server.web, token).joinTable({ tableId: old, seat: 0 });
    const quick: string[] = [];
    for (let i = 0; i < 102; i++) quick.push(await houseTable(server.web, token, 3, 1));
    for (let i = 0; i < 600; i++) {
      const r = await mine0(server.web, token).listTables({ state: TableState.FINISHED, pageSize: 200 });
      if (r.tables.length >= 101) break;
      await sleep(250);
    }
    const playing: string[] = [];
    for (let pageToken = ""; ;) {
      const r = await mine0(server.web, token).listTables({ state: TableState.PLAYING, pageSize: 200, pageToken });
      playing.push(...r.tables.map((t) => t.tableId));
      if (!r.nextPageToken) break;
      pageToken = r.nextPageToken;
    }
    check(playing.includes(old), "the older live table is still playing");
    await page.goto(`${server.web}/#/`);
    await page.locator(`[data-section="live"] tr[data-table="${old}"]`).waitFor({ timeout: 10_000 });
    const counter = await page.getByTestId("lobby-count").innerText();
    const shownLive = Number(counter.match(/(\d+) live/)?.[1]);
    check(Math.abs(shownLive - playing.length) <= 2, `the counter counts the live tables: "${counter}" (${playing.length} playing)`);
    check(/finished shown \(more below\)/.test(counter), `the counter says finished tables are a first page: "${counter}"`);
    await page.getByTestId("lobby-more").click();
    await page.waitForFunction(() => document.querySelectorAll('[data-section="finished"] tr[data-table]').length > 25);
    step(`the lobby shows live tables first behind 100+ finished ones: "${counter}"`);
    // Back on a table still playing, for the restart below (the first one may be over).
    const again = await houseTable(server.web, token, 4, 20);
    await page.goto(`${server.web}/#/table/${again}`);
    await page.getByTestId("conn").filter({ hasText: "live" }).waitFor();
    await page.locator('[data-testid="log"] li').nth(5).waitFor({ timeout: 20_000 });

    // 3. Hidden information: a table whose deal stops at our own bot's turn (it never acts and
    // has a minute), watched by a fresh page with its network data recorded.
    // The page opens while the table waits, so the match's start and bids stream to it live.
    const stuck = await houseTable(server.web, token, 3, 1, 2);
    const mine = api(server.web, token).tables;
    const spy = await context.newPage();
    const wire = new Wire(await context.newCDPSession(spy));
    await wire.start();
    await spy.goto(`${server.web}/#/table/${stuck}`);
    await spy.getByTestId("conn").filter({ hasText: "live" }).waitFor();
    await mine.joinTable({ tableId: stuck, seat: 0 });
    await spy.getByTestId("seat-2").waitFor();
    let hand: string[] = [];
    for (let i = 0; i < 200 && hand.length === 0; i++) {
      const v = (await mine.getSeatView({ tableId: stuck })).view!;
      if (v.toAct === 0 && v.hand.length) hand = v.hand;
      else await sleep(50);
    }
    check(hand.length === 5, `our seat holds five cards mid-deal (${hand})`);
    await sleep(1500); // the page's refreshes and stream settle
    const msgs = wire.messages();
    check(msgs.filter((m) => m.method.endsWith("WatchTable")).length >= 6, "the page's WatchTable stream was recorded (snapshot, start, deal, bids)");
    check(msgs.some((m) => JSON.stringify(m.json).includes("dealStarted")), "the deal's start reached the page");
    const seen = msgs.flatMap((m) => cardsIn(m.json).map((c) => ({ ...c, method: m.method })));
    const leaks = seen.filter((c) => !PUBLIC.some((p) => p.test(c.path)));
    check(leaks.length === 0, `no card outside public fields reaches the page: ${JSON.stringify(leaks.slice(0, 5))}`);
    const ours = seen.filter((c) => hand.includes(c.card));
    check(ours.length === 0, `no card of our hidden hand reaches the page's network data: ${JSON.stringify(ours)}`);
    const inDom = await domCards(spy);
    check(!inDom.some((c) => hand.includes(c)), `no card of our hand in the DOM (${inDom})`);
    const html = await spy.content();
    check(!hand.some((c) => html.includes(`"${c}"`)), "no card of our hand in the page's HTML");
    for (let s = 0; s < 3; s++) {
      const faceUp = await spy.getByTestId(`hand-${s}`).locator("[data-card]").count();
      const faceDown = await spy.getByTestId(`hand-${s}`).locator('[data-face="down"]').count();
      check(faceUp === 0 && faceDown >= 4, `seat ${s}'s hand is face down (${faceUp} up, ${faceDown} down)`);
    }
    results.hidden = { messages: msgs.length, cards_seen: seen.length, our_hand: hand };
    step(`hidden information holds: ${msgs.length} messages decoded, ${seen.length} public cards, none of our 5`);
    await spy.close();

    // 4. The server goes away and comes back: the page shows it and resumes from its last seq.
    const seqBefore = await page.evaluate(() => Number(document.querySelector('[data-testid="log"] li')?.getAttribute("value") ?? 0));
    await stopServer(server);
    await page.getByTestId("conn").filter({ hasText: "reconnecting" }).waitFor({ timeout: 15_000 });
    step("the page shows reconnecting while the server is away");
    await page.screenshot({ path: join(docs, "web-reconnecting.png") });
    server = await startServer(dataDir, grpcPort, webPort, metricsPort);
    await page.getByTestId("conn").filter({ hasText: "live" }).waitFor({ timeout: 30_000 });
    await page.waitForFunction((before) => Number(document.querySelector('[data-testid="log"] li')?.getAttribute("value") ?? 0) > before + 20, seqBefore, { timeout: 30_000 });
    const seqs = await page.evaluate(() => [...document.querySelectorAll('[data-testid="log"] li')].map((li) => Number(li.getAttribute("value"))));
    check(new Set(seqs).size === seqs.length, "no event shown twice after the resume");
    step(`back live after the restart, resumed past seq ${seqBefore}`);

    // 5. Frames while a 7-seat table streams: rAF intervals over 5 s on its page.
    const fast = await houseTable(server.web, token, 7, 20);
    await page.goto(`${server.web}/#/table/${fast}`);
    await page.getByRole("heading", { name: `Table ${fast}` }).waitFor();
    await page.getByTestId("conn").filter({ hasText: "live" }).waitFor();
    await page.locator('[data-testid="log"] li').first().waitFor({ timeout: 20_000 });
    await sleep(1000);
    const frames = await page.evaluate(async () => {
      const seq = () => Number(document.querySelector('[data-testid="log"] li')?.getAttribute("value") ?? 0);
      const gaps: number[] = [];
      const first = seq();
      const t0 = performance.now();
      let last = t0;
      await new Promise<void>((done) => {
        const tick = (t: number) => {
          gaps.push(t - last);
          last = t;
          if (t - t0 < 5000) requestAnimationFrame(tick); else done();
        };
        requestAnimationFrame(tick);
      });
      const secs = (performance.now() - t0) / 1000;
      gaps.sort((a, b) => a - b);
      return {
        seconds: secs,
        events_per_second: (seq() - first) / secs,
        frames: gaps.length,
        fps: gaps.length / secs,
        p50_ms: gaps[Math.floor(gaps.length * 0.5)],
        p99_ms: gaps[Math.floor(gaps.length * 0.99)],
        max_ms: gaps[gaps.length - 1],
        over_50ms: gaps.filter((g) => g > 50).length,
      };
    });
    results.frames = frames;
    step(`frames while streaming: ${JSON.stringify(frames)}`);
    check(frames.events_per_second > 0 && frames.frames > 0, "the table streamed and the page drew frames");

    // Two bots enter the bete-4 ladder (with its two house entrants, a 4-seat group) and play
    // (after the frames were measured) while the next steps run, so step 8 has rated matches to show.
    const ladderStop = new AbortController();
    const ladderA = await ladderBot(server.web, "ladder-a", "bete-4", ladderStop.signal);
    const ladderB = await ladderBot(server.web, "ladder-b", "bete-4", ladderStop.signal);

    // 6. A 7-seat table on a phone screen.
    const phone = await browser.newContext(PHONE);
    const pp = await phone.newPage();
    await pp.goto(`${server.web}/#/table/${fast}`);
    await pp.getByTestId("seat-6").waitFor();
    await phoneOverflow(pp, "a 7-seat table");
    await seatNames(pp, "a 7-seat table on a phone");
    // The seat to act and the trick in the first screen: a 20-round table has one almost always.
    const firstScreen = await pp.waitForFunction(() => {
      const acting = document.querySelector('.seat[aria-current="true"]');
      const trick = document.querySelector('[data-testid="trick"]');
      if (!acting || !trick) return null;
      return { acting: acting.getBoundingClientRect().bottom, trick: trick.getBoundingClientRect().bottom, seat: acting.getAttribute("data-testid"), h: innerHeight };
    }, null, { timeout: 30_000, polling: 50 }).then((h) => h.jsonValue());
    check(firstScreen && firstScreen.acting <= firstScreen.h && firstScreen.trick <= firstScreen.h, `the acting seat and the trick in a phone's first screen: ${JSON.stringify(firstScreen)}`);
    step("the acting seat and the trick are in a phone's first screen");
    await pp.screenshot({ path: join(docs, "web-table-phone.png") });
    await phone.close();
    step("7 seats fit a phone screen");

    // 6b. Ten seats (Five-card Loo, the largest table of any ruleset): every seat is shown, and
    // they fit a phone screen without sideways scrolling.
    const loo = await houseTable(server.web, token, 10, 1, 10, Ruleset.LOO);
    await page.goto(`${server.web}/#/table/${loo}`);
    await page.getByRole("heading", { name: `Table ${loo}` }).waitFor();
    await page.getByTestId("seat-9").waitFor();
    const shown = await page.locator('ol.seats > li').count();
    check(shown === 10, `ten seats shown at a 10-seat table (${shown})`);
    const phone10 = await browser.newContext(PHONE);
    const pp10 = await phone10.newPage();
    await pp10.goto(`${server.web}/#/table/${loo}`);
    await pp10.getByTestId("seat-9").waitFor();
    await phoneOverflow(pp10, "a 10-seat table");
    await phone10.close();
    step("10 seats (Loo) shown, and fit a phone screen");

    // Everything the main page received while following live tables: public facts only
    // (settled deals' reveals included, which come after their deal).
    const live_msgs = pageWire.messages();
    const live_cards = live_msgs.flatMap((m) => cardsIn(m.json));
    const live_leaks = live_cards.filter((c) => !PUBLIC.some((p) => p.test(c.path)));
    check(live_msgs.length > 300, `the live pages' data was recorded (${live_msgs.length} messages)`);
    check(live_leaks.length === 0, `no card outside public fields on live pages: ${JSON.stringify(live_leaks.slice(0, 5))}`);
    results.live_wire = { messages: live_msgs.length, public_cards: live_cards.length };
    step(`live pages: ${live_msgs.length} messages decoded, ${live_cards.length} cards, all public`);

    // 7. A replay of a finished table: by action and by deal, every hand face up.
    const done = await houseTable(server.web, token, 3, 1);
    for (let i = 0; i < 300; i++) {
      const t = (await mine.getTable({ tableId: done })).table!;
      if (t.state === TableState.FINISHED) break;
      await sleep(100);
    }
    await page.goto(`${server.web}/#/replay/${done}`);
    await page.getByTestId("step").filter({ hasText: "step 0 of" }).waitFor();
    check(await page.getByTestId("hand-0").locator("[data-card]").count() === 5, "every hand face up in a replay");
    for (let i = 0; i < 5; i++) await page.getByTestId("step-forward").click();
    await page.getByTestId("step").filter({ hasText: "step 5 of" }).waitFor();
    await page.getByTestId("step-back").click();
    await page.getByTestId("step").filter({ hasText: "step 4 of" }).waitFor();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    await page.getByTestId("step").filter({ hasText: "step 6 of" }).waitFor();
    // A deal can end within a few steps (everyone passes), so "next deal" is counted from here.
    const dealNow = Number((await page.getByTestId("step").innerText()).match(/deal (\d+)/)?.[1]);
    await page.getByTestId("deal-forward").click();
    await page.getByTestId("step").filter({ hasText: `deal ${dealNow + 1}` }).waitFor();
    // At a deal's start, Page Up goes to the start of the deal before.
    await page.keyboard.press("PageUp");
    await page.getByTestId("step").filter({ hasText: `deal ${dealNow}` }).waitFor();
    await page.keyboard.press("Home");
    await page.getByTestId("step").filter({ hasText: "step 0 of" }).waitFor();
    await page.keyboard.press("PageDown");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    await page.screenshot({ path: join(docs, "web-replay.png"), fullPage: true });
    step("a replay steps by action and by deal, with the keyboard too");
    // A dropped record file: a good one replays, a bad one says what is wrong.
    const record = (await api(server.web).tables.getGameRecord({ tableId: done })).recordJson;
    await page.getByTestId("replay-file").setInputFiles({ name: "match.json", mimeType: "application/json", buffer: Buffer.from(record) });
    await page.getByTestId("step").filter({ hasText: "step 0 of" }).waitFor();
    await page.getByTestId("replay-file").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("these are not the cards you are looking for") });
    await page.getByTestId("replay-error").filter({ hasText: "notes.txt: not a replayable record" }).waitFor();
    await page.goto(`${server.web}/#/replay/t_0000000000000000`);
    await page.getByTestId("replay-error").filter({ hasText: "no table has id" }).waitFor();
    await page.goto(`${server.web}/#/table/t_0000000000000000`);
    await page.getByTestId("conn").filter({ hasText: "cannot watch" }).waitFor();
    step("bad records and unknown tables get clear messages");
    void name;

    // 7b. Replays: the step in the URL, autoplay, the list of deals with their results.
    await page.goto(`${server.web}/#/replay/${done}/7`);
    await page.getByTestId("step").filter({ hasText: "step 7 of" }).waitFor();
    await page.getByTestId("step-forward").click();
    await page.waitForFunction((id) => location.hash === `#/replay/${id}/8`, done);
    const dealsListed = await page.getByTestId("deals").locator("li").allInnerTexts();
    check(dealsListed.length >= 3 && dealsListed.every((d) => /settled/.test(d)), `the deals are listed with their results: ${dealsListed}`);
    await page.getByTestId("speed").selectOption("8");
    await page.getByTestId("autoplay").click();
    await page.getByTestId("step").filter({ hasText: /step (1[2-9]|[2-9]\d)/ }).waitFor({ timeout: 10_000 });
    await page.getByTestId("autoplay").click();
    step("a replay's step is in its URL; autoplay runs at the chosen speed; the deals are listed with results");

    // 7b'. Analysis: the search policy's verdict on each decision, marks on the step bar.
    await page.getByTestId("analyse").click();
    const summary = await page.getByTestId("analysis-summary").innerText({ timeout: 60_000 });
    const analysed = Number(summary.match(/^(\d+) decisions analysed/)?.[1]);
    check(analysed > 0, `decisions analysed: ${summary}`);
    const kept = await api(server.web).replays.analyseTable({ tableId: done });
    check(kept.decisions.length === analysed, `the analysis is kept per table (${kept.decisions.length} = ${analysed})`);
    check(kept.decisions.every((d) => d.cost >= 0 && d.samples > 0 && d.best?.text), "every analysed decision has the search's move and a cost of 0 or more");
    const marked = kept.decisions.filter((d) => d.cost >= 0.5).length;
    check(await page.locator('[data-testid="analysis-marks"] .mark').count() === marked, `a mark on the step bar for each costly move (${marked})`);
    const d0 = kept.decisions[0];
    // A link to a decision's step (the same replay: the analysis stays on the page).
    await page.goto(`${server.web}/#/replay/${done}/${d0.step}`);
    await page.getByTestId("step").filter({ hasText: `step ${d0.step} of` }).waitFor();
    await page.getByTestId("verdict").waitFor({ timeout: 30_000 });
    step(`analysis: ${summary}; the verdict shown at step ${d0.step}: ${await page.getByTestId("verdict").innerText()}`);
    results.analysis = { decisions: analysed, marked };

    // 7c. A turn-up the dealer took up is not drawn in its slot (Beste Boer's dealer discard).
    let takenAt: { table: string; step: number } | undefined;
    for (let i = 0; i < 6 && !takenAt; i++) {
      const t = await houseTable(server.web, token, 4, 1, 4, Ruleset.BESTE_BOER);
      for (let j = 0; j < 300; j++) {
        if ((await mine.getTable({ tableId: t })).table!.state === TableState.FINISHED) break;
        await sleep(100);
      }
      const r = await api(server.web).replays.replayRecord({ source: { case: "tableId", value: t } });
      const at = r.steps.findIndex((st) => st.view?.turnUpTaken && st.view.turnUp);
      if (at >= 0) takenAt = { table: t, step: at };
    }
    check(takenAt, "a Beste Boer dealer took up the turn-up in one of six matches");
    await page.goto(`${server.web}/#/replay/${takenAt.table}/${takenAt.step}`);
    await page.getByTestId("step").filter({ hasText: `step ${takenAt.step} of` }).waitFor();
    await page.getByTestId("turnup-taken").waitFor();
    check(await page.getByTestId("turnup").count() === 0, "a taken turn-up is not drawn in the turn-up's slot");
    step(`a taken turn-up is shown as taken (${takenAt.table} step ${takenAt.step})`);

    // 8. Ladders: the leaderboard when the server runs ladders; otherwise the page says so.
    await page.goto(`${server.web}/#/ladders`);
    await page.getByRole("heading", { name: "Ladders" }).waitFor();
    const ladderState = await Promise.race([
      page.getByTestId("ladders").waitFor().then(() => "ladders"),
      page.getByText("this server runs no ladders").waitFor().then(() => "none"),
      page.getByText("No ladder is declared on this server.").waitFor().then(() => "empty"),
    ]);
    if (ladderState === "ladders") {
      await page.getByTestId("ladders").locator('a[href="#/ladders/bete-4"]').click();
      await page.getByTestId("standings").waitFor();
      // The board fills in when the first match (a duplicate set of 4 tables) is rated.
      await page.getByTestId("standings").locator("tbody tr").nth(3).waitFor({ timeout: 120_000 });
      // Five entrants (two of ours, three house) for four seats: a set seats at least one of ours.
      await page.waitForFunction(() => /ladder-[ab]/.test(document.querySelector('[data-testid="standings"]')?.textContent ?? ""), null, { timeout: 120_000 });
      const rows = await page.getByTestId("standings").locator("tbody tr").allInnerTexts();
      const ours = rows.some((r) => r.includes("ladder-a")) ? "ladder-a" : "ladder-b";
      check(rows.some((r) => r.includes(ours)), `our bot is on the leaderboard: ${rows}`);
      check(await page.locator(".ratingbar .interval").count() >= 4, "every line has its rating interval bar");
      await page.getByTestId("results").locator("li").first().waitFor({ timeout: 60_000 });
      await page.screenshot({ path: join(docs, "web-ladder.png"), fullPage: true });
      step(`a ladder's leaderboard is read: ${rows.length} lines`);
      // A duplicate set's tables side by side, deal by deal.
      await page.getByTestId("set-link").first().click();
      await page.getByTestId("set").locator("section").nth(1).waitFor({ timeout: 30_000 });
      const setTables = await page.getByTestId("set").locator("section").count();
      check(setTables >= 2, `a duplicate set's tables side by side (${setTables})`);
      await page.getByTestId("set-next").click();
      await page.getByTestId("set-deal").filter({ hasText: "deal 2 of" }).waitFor();
      step(`a duplicate set's ${setTables} tables side by side, deal by deal`);
      await page.goBack();
      await page.getByTestId("standings").waitFor();
      // A bot's page: its matches link to their replays.
      await page.getByTestId("standings").locator("a", { hasText: ours }).click();
      await page.locator('.results a[href^="#/replay/"]').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(docs, "web-ladder-bot.png"), fullPage: true });
      await page.locator('.results a[href^="#/replay/"]').first().click();
      await page.getByTestId("step").filter({ hasText: "step 0 of" }).waitFor();
      step("a bot's page links its matches to their replays");
      // The bot's page opens with its summary.
      await page.goto(`${server.web}/#/ladders/bete-4/bot/${ours === "ladder-a" ? ladderA.botId : ladderB.botId}`);
      const summary = await page.getByTestId("bot-summary").innerText();
      for (const w of ["Rating", "Rank", "Matches", "Mean jetons per deal", "Owner", "Version"]) check(summary.includes(w), `the bot's summary gives its ${w}: ${summary}`);
      step("a bot's page opens with rating, rank, matches, jetons per deal, owner and version");
      // The ladder's crosstable, figure for figure as GetCrosstable gives it.
      results.crosstable = await crosstableShown(page, browser, server.web, "bete-4", join(docs, "web-crosstable-phone.png"));

      // The ladder's live marker through an outage: reconnecting while the server is away.
      await page.goto(`${server.web}/#/ladders/bete-4`);
      await page.getByTestId("ladder-conn").filter({ hasText: "live" }).waitFor({ timeout: 15_000 });
      await contrastAtLeast(page, '[data-testid="ladder-conn"]', "the live chip (light)");
      ladderStop.abort();
      await stopServer(server);
      await page.getByTestId("ladder-conn").filter({ hasText: "reconnecting" }).waitFor({ timeout: 15_000 });
      server = await startServer(dataDir, grpcPort, webPort, metricsPort);
      await page.getByTestId("ladder-conn").filter({ hasText: "live" }).waitFor({ timeout: 30_000 });
      step("the ladder's live marker says reconnecting through an outage, live after it");

      // A bot that left: marked with words, readable (no faded line).
      const leaver = ours === "ladder-a" ? ladderA : ladderB;
      await api(server.web, leaver.token).ladders.leaveLadder({ ladderId: "bete-4" });
      await page.reload();
      await page.getByTestId("standings").locator("tr.inactive", { hasText: "left the ladder" }).first().waitFor({ timeout: 15_000 });
      await contrastAtLeast(page, "tr.inactive td", "a left bot's line (light)");
      await page.getByTestId("theme").click(); // auto → dark
      await page.getByTestId("ladder-conn").filter({ hasText: "live" }).waitFor({ timeout: 15_000 });
      check(await page.evaluate(() => document.documentElement.dataset.theme) === "dark", "the toggle turns dark mode on");
      await contrastAtLeast(page, '[data-testid="ladder-conn"]', "the live chip (dark)");
      await contrastAtLeast(page, "tr.inactive td", "a left bot's line (dark)");
      await contrastAtLeast(page, ".meta, caption", "muted text (dark)");
      await page.getByTestId("theme").click(); // dark → light
      await contrastAtLeast(page, ".meta, caption", "muted text (light)");
      await page.getByTestId("theme").click(); // light → auto
      step("live chip, left bots and muted text at least 4.5:1 in light and dark; left bots marked in words");
    } else {
      step(`ladders: ${ladderState === "none" ? "this server serves no LadderService yet" : "no ladder declared"}; the page says so`);
    }
    ladderStop.abort();
    results.ladders = ladderState;

    // 9. Every page on a phone: no sideways overflow, measured element by element.
    {
      const phoneAll = await browser.newContext(PHONE);
      const pa = await phoneAll.newPage();
      const pages: [string, () => Promise<unknown>][] = [
        ["#/", () => pa.locator("tr[data-table]").first().waitFor()],
        [`#/table/${live}`, () => pa.getByTestId("seat-3").waitFor()],
        [`#/replay/${done}/5`, () => pa.getByTestId("step").waitFor()],
        ["#/play", () => pa.getByTestId("play-guest").waitFor()],
        ["#/ladders", () => pa.getByRole("heading", { name: "Ladders" }).waitFor()],
      ];
      if (ladderState === "ladders") {
        pages.push(["#/ladders/bete-4", () => pa.getByTestId("standings").locator("tbody tr").nth(3).waitFor().then(() => pa.getByTestId("crosstable").locator("tbody tr").first().waitFor())]);
        pages.push([`#/ladders/bete-4/bot/${ladderA.botId}`, () => pa.getByRole("heading", { name: "Rating over time" }).waitFor()]);
        pages.push([`#/bot/${ladderA.botId}`, () => pa.getByTestId("bot-summary").first().waitFor()]);
      }
      for (const [hash, ready] of pages) {
        await pa.goto(`${server.web}/${hash}`);
        await ready();
        await sleep(300);
        await phoneOverflow(pa, hash);
      }
      await pa.screenshot({ path: join(docs, "web-ladder-phone.png"), fullPage: true });
      await phoneAll.close();
      step(`no sideways overflow on a phone on ${pages.length} pages`);
    }

    // 10. A person plays a whole game by clicking.
    const player = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    results.play_clicks = await playByClicking(player, server.web);
    await player.close();
    // 10b. A friend takes the other seat by the shared link; both play by clicking.
    results.play_friend = await friendJoinsByLink(browser, server.web);
    // 10c. A pasted account token plays; it goes only to this server and into no URL.
    results.play_account = await accountTokenPlays(browser, server.web);

    writeFileSync(join(root, "target", "web-test-results.json"), JSON.stringify(results, null, 2));
    console.log("web: ok");
  } catch (e) {
    // What the pages showed when it failed, for the log reader.
    for (const [i, p] of browser.contexts().flatMap((c) => c.pages()).entries()) {
      await p.screenshot({ path: join(root, "target", `web-test-failure-${i}.png`), fullPage: true }).catch(() => {});
    }
    throw e;
  } finally {
    await browser.close();
    await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
