// Browser checks of the page's third round (issues 24 and 28): the ladder's crosstable, a friend
// joining a game by its link, a pasted account token, and the page's WebSocket limit on live
// streams. Called by browser.ts with its server, browser and helpers; each fails on the page
// before it.
import type { Browser, Page } from "playwright-core";
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { AccountService } from "../src/gen/bete/v1/account_service_pb";
import { LadderService, type GetCrosstableResponse } from "../src/gen/bete/v1/ladder_service_pb";
import { check, PHONE, phoneOverflow } from "./round2";

const step = (s: string) => console.log(`web: ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const transport = (web: string) => createGrpcWebTransport({ baseUrl: web, useBinaryFormat: true });

/** The page's figures, as crosstable.tsx writes them. */
const perDeal = (v: number) => `${v > 0 ? "+" : ""}${v.toFixed(2)}`;

/** The ladder's page shows its crosstable: one line per pair GetCrosstable returns, each with
 * its meetings, mean difference and interval as the server computed them, names linking to the
 * bots' pages; and it fits a phone. The ladder goes on playing meanwhile, so the page and the
 * call are compared when both saw the same number of rated matches. */
export async function crosstableShown(page: Page, browser: Browser, web: string, ladderId: string, shots?: string) {
  const ladders = createClient(LadderService, transport(web));
  // Until some pair has met twice: an interval with a spread to show (the house entrants meet
  // in every set, so the second rated set gives one).
  for (let i = 0; i < 240; i++) {
    if ((await ladders.getCrosstable({ ladderId })).pairs.some((p) => p.meetings > 1)) break;
    await sleep(1000);
  }
  await page.goto(`${web}/#/ladders/${ladderId}`);
  await page.getByTestId("crosstable").locator("tbody tr").first().waitFor({ timeout: 60_000 });
  let ct: GetCrosstableResponse | undefined;
  let rows: { pair: string; meetings: string; mean: string; interval: string; links: { href: string; text: string }[] }[] = [];
  for (let i = 0; i < 120; i++) {
    ct = await ladders.getCrosstable({ ladderId });
    const shown = await page.getByTestId("crosstable-count").innerText();
    const rated = Number(shown.match(/in (\d+) rated match/)?.[1]);
    if (rated === Number(ct.matchesRated)) {
      rows = await page.getByTestId("crosstable").locator("tbody tr").evaluateAll((trs) => trs.map((tr) => ({
        pair: tr.getAttribute("data-pair") ?? "",
        meetings: tr.querySelector('[data-testid="meetings"]')?.textContent ?? "",
        mean: tr.querySelector('[data-testid="mean"]')?.textContent ?? "",
        interval: tr.querySelector('[data-testid="interval"]')?.textContent ?? "",
        links: [...tr.querySelectorAll("a")].map((a) => ({ href: a.getAttribute("href") ?? "", text: a.textContent ?? "" })),
      })));
      // The page and the call saw the same matches: stop (unless a rating landed in between).
      if (Number((await ladders.getCrosstable({ ladderId })).matchesRated) === rated) break;
    }
    rows = [];
    await sleep(500);
  }
  check(ct && rows.length, "the page and GetCrosstable agreed on the rated matches within a minute");
  check(ct.pairs.length >= 6, `a rated set of four entrants makes at least 6 pairs (${ct.pairs.length})`);
  check(rows.length === ct.pairs.length, `one line per pair: ${rows.length} lines, ${ct.pairs.length} pairs`);
  check(ct.pairs.some((p) => p.meetings > 1), `some pair met twice within four minutes: ${ct.pairs.map((p) => p.meetings)}`);
  const count = await page.getByTestId("crosstable-count").innerText();
  check(count.startsWith(`${ct.pairs.length} pairs have met`), `the count of pairs: "${count}"`);
  for (const p of ct.pairs) {
    const r = rows.find((r) => r.pair === `${p.botA} ${p.botB}`);
    check(r, `the pair ${p.botA} · ${p.botB} is shown`);
    check(r.meetings === String(p.meetings), `${p.botAName} · ${p.botBName}: meetings ${r.meetings}, GetCrosstable ${p.meetings}`);
    check(r.mean === perDeal(p.meanNetDifferencePerDeal), `${p.botAName} · ${p.botBName}: mean ${r.mean}, GetCrosstable ${p.meanNetDifferencePerDeal}`);
    const want = p.meetings > 1 ? `${perDeal(p.intervalLow)} to ${perDeal(p.intervalHigh)}` : "one meeting";
    check(r.interval === want, `${p.botAName} · ${p.botBName}: interval "${r.interval}", GetCrosstable "${want}"`);
    check(p.meetings > 1 || p.intervalLow === p.intervalHigh, "one meeting has no spread");
    check(r.links.length === 2
      && r.links[0].href === `#/ladders/${ladderId}/bot/${encodeURIComponent(p.botA)}` && r.links[0].text === (p.botAName || p.botA)
      && r.links[1].href === `#/ladders/${ladderId}/bot/${encodeURIComponent(p.botB)}` && r.links[1].text === (p.botBName || p.botB),
    `both names link to the bots' pages: ${JSON.stringify(r.links)}`);
  }
  // A name leads to the bot's page on the ladder.
  const first = ct.pairs[0];
  await page.getByTestId("crosstable").locator(`tr[data-pair="${first.botA} ${first.botB}"] a`).first().click();
  await page.getByRole("heading", { name: "Rating over time" }).waitFor();
  check(page.url().endsWith(`#/ladders/${ladderId}/bot/${encodeURIComponent(first.botA)}`), `the name opened the bot's page (${page.url()})`);
  step(`the ladder's crosstable: ${rows.length} pairs from ${ct.matchesRated} rated matches, figures as GetCrosstable's`);

  // On a phone: no sideways overflow with the crosstable shown.
  const phone = await browser.newContext(PHONE);
  const pp = await phone.newPage();
  await pp.goto(`${web}/#/ladders/${ladderId}`);
  await pp.getByTestId("crosstable").locator("tbody tr").first().waitFor({ timeout: 30_000 });
  await sleep(300);
  await phoneOverflow(pp, "a ladder's page with its crosstable");
  if (shots) await pp.getByTestId("crosstable").screenshot({ path: shots });
  await phone.close();
  return { pairs: rows.length, matches_rated: Number(ct.matchesRated), most_meetings: Math.max(...ct.pairs.map((p) => p.meetings)) };
}

/** What the page sent where: every HTTP request and WebSocket frame of `page`, recorded by the
 * browser itself (CDP), to check where a token goes. */
async function recordTraffic(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable", {});
  const requests: { url: string; carried: string }[] = [];
  const sockets = new Map<string, string>();
  const frames: { url: string; data: string }[] = [];
  const navigations: string[] = [];
  const urlOf = new Map<string, string>();
  cdp.on("Network.requestWillBeSent", (e) => {
    urlOf.set(e.requestId, e.request.url);
    requests.push({ url: e.request.url, carried: `${e.request.url}\n${JSON.stringify(e.request.headers)}\n${e.request.postData ?? ""}` });
  });
  // The headers as sent on the wire (authorization included), which the event above may not
  // hold; it can come first, so its URL is looked up at the end.
  const extra: { id: string; carried: string }[] = [];
  cdp.on("Network.requestWillBeSentExtraInfo", (e) => extra.push({ id: e.requestId, carried: JSON.stringify(e.headers) }));
  cdp.on("Network.webSocketCreated", (e) => sockets.set(e.requestId, e.url));
  cdp.on("Network.webSocketFrameSent", (e) => {
    const f = e.response;
    const data = f.opcode === 2 ? Buffer.from(f.payloadData, "base64").toString("latin1") : f.payloadData;
    frames.push({ url: sockets.get(e.requestId) ?? "?", data });
  });
  page.on("framenavigated", (f) => navigations.push(f.url()));
  const all = () => [...requests, ...extra.map((x) => ({ url: urlOf.get(x.id) ?? sockets.get(x.id) ?? "?", carried: x.carried }))];
  return { all, sockets, frames, navigations };
}

/** `token` went only to `web` (the page's own server), and never into a URL. */
function tokenStaysHome(t: Awaited<ReturnType<typeof recordTraffic>>, token: string, web: string, what: string) {
  const ws = web.replace(/^http/, "ws");
  const requests = t.all();
  const urls = [...requests.map((r) => r.url), ...t.sockets.values(), ...t.navigations];
  check(!urls.some((u) => u.includes(token)), `${what}: the token appears in no URL`);
  const carriers = t.frames.filter((f) => f.data.includes(token));
  check(carriers.length > 0, `${what}: the page's calls carried the token (on its WebSocket)`);
  check(carriers.every((f) => f.url.startsWith(`${ws}/`)), `${what}: the token went only to the page's own server: ${[...new Set(carriers.map((f) => f.url))]}`);
  const httpCarriers = requests.filter((r) => r.carried.includes(token));
  check(httpCarriers.every((r) => r.url.startsWith(`${web}/`) || r.url.startsWith(`${ws}/`)), `${what}: no HTTP request elsewhere carried the token: ${httpCarriers.map((r) => r.url)}`);
  const foreign = requests.filter((r) => r.url !== "?" && !r.url.startsWith(`${web}/`) && !r.url.startsWith(`${ws}/`) && !r.url.startsWith("data:"));
  check(foreign.length === 0, `${what}: the page made no request to another server: ${foreign.map((r) => r.url)}`);
}

/** Clicks a legal action on whichever page offers some, until every page says the match is
 * over; returns the clicks made on each. */
async function clickUntilOver(pages: Page[], what: string, seconds = 240): Promise<number[]> {
  const clicks = pages.map(() => 0);
  const end = Date.now() + seconds * 1000;
  for (;;) {
    check(Date.now() < end, `${what}: the match ended within ${seconds} s (clicks ${clicks})`);
    let over = 0;
    for (const [i, p] of pages.entries()) {
      if (await p.getByTestId("play-over").count()) { over++; continue; }
      const buttons = p.locator("button[data-action]");
      if (await buttons.count()) {
        const actions = await buttons.evaluateAll((bs) => bs.map((b) => b.getAttribute("data-action") ?? ""));
        check(actions.every((a) => /^[a-z]+( [2-9TJQKA][SHDC])*$/.test(a)), `${what}: legal actions carry their notation: ${actions}`);
        await buttons.first().click({ timeout: 2_000 }).then(() => { clicks[i]++; }, () => { /* the list changed under the click */ });
      }
    }
    if (over === pages.length) return clicks;
    await sleep(60);
  }
}

/** Each player sees their own hand face up and no other hand's card. */
async function ownHandOnly(p: Page, seat: number, seats: number, what: string) {
  await p.locator(`[data-testid="hand-${seat}"] [data-card]`).first().waitFor({ timeout: 30_000 });
  for (let s = 0; s < seats; s++) {
    if (s === seat) continue;
    const up = await p.locator(`[data-testid="hand-${s}"] [data-card]`).count();
    check(up === 0, `${what}: seat ${s}'s hand is not shown to seat ${seat} (${up} cards up)`);
  }
}

/** A person starts a table with a seat for a friend; the friend opens the shared link in
 * another browser (its own session), takes a guest token and the free seat, and both play the
 * whole match by clicking, each seeing only their own hand. */
export async function friendJoinsByLink(browser: Browser, web: string) {
  const hostCtx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const friendCtx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const host = await hostCtx.newPage();
    await host.goto(`${web}/#/play`);
    await host.getByTestId("play-guest").click();
    await host.getByTestId("play-who").waitFor();
    await host.getByTestId("play-seats").fill("3");
    await host.getByTestId("play-friends").fill("1");
    await host.getByTestId("play-start").click();
    await host.waitForURL(/#\/play\/t_/);
    const link = (await host.getByTestId("play-link").innerText()).trim();
    const tableId = link.match(/#\/play\/(t_\w+)$/)?.[1];
    check(tableId && link.startsWith(`${web}/`), `the shared link is the page's own, to the table: ${link}`);
    // Nobody plays until the friend comes: no action offered to the host yet.
    await sleep(1500);
    check(await host.locator("button[data-action]").count() === 0, "the table waits for the friend's seat");

    const friend = await friendCtx.newPage();
    const traffic = await recordTraffic(friend);
    await friend.goto(link);
    await friend.getByTestId("play-guest").click();
    await friend.getByTestId("play-who").waitFor();
    check(friend.url() === link, `the friend stays on the shared table's page (${friend.url()})`);
    const friendToken = await friend.evaluate(() => sessionStorage.getItem("bete.play.token") ?? "");
    const hostToken = await host.evaluate(() => sessionStorage.getItem("bete.play.token") ?? "");
    check(friendToken.length > 10 && friendToken !== hostToken, "the friend has a token of their own, in their own tab");
    await friend.getByTestId("play-join").click();
    await ownHandOnly(friend, 1, 3, "the friend");
    await ownHandOnly(host, 0, 3, "the host");
    const clicks = await clickUntilOver([host, friend], "a game with a friend");
    check(clicks[0] >= 3 && clicks[1] >= 3, `both people played by clicking (host ${clicks[0]}, friend ${clicks[1]} clicks)`);
    const seats = await friend.locator(".seat .name").allInnerTexts();
    check(seats.length === 3, `three seats shown: ${seats}`);
    tokenStaysHome(traffic, friendToken, web, "the friend's token");
    step(`a friend joined by the shared link and both played by clicking (host ${clicks[0]}, friend ${clicks[1]} clicks)`);
    return { host: clicks[0], friend: clicks[1] };
  } finally {
    await hostCtx.close();
    await friendCtx.close();
  }
}

/** A person pastes an account token (not a guest's): the page plays as a bot of that account,
 * the account token goes only to the page's own server, never into a URL, and is not kept. */
export async function accountTokenPlays(browser: Browser, web: string) {
  const accounts = createClient(AccountService, transport(web));
  const acct = await accounts.createAccount({ name: "web-person" });
  const token = acct.token;
  check(token.length > 10, "an account token");
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await ctx.newPage();
    const traffic = await recordTraffic(page);
    await page.goto(`${web}/#/play`);
    // A token that is neither an account's nor a bot's is refused with a message.
    await page.getByTestId("play-token").fill("not-a-token-at-all");
    await page.getByTestId("play-token-use").click();
    await page.getByTestId("play-token-error").waitFor({ timeout: 10_000 });
    check(await page.getByTestId("play-who").count() === 0, "a bad token is not taken");
    await page.getByTestId("play-token").fill(token);
    await page.getByTestId("play-token-use").click();
    await page.getByTestId("play-who").waitFor({ timeout: 10_000 });
    const kept = await page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage } }));
    check(!JSON.stringify(kept).includes(token), "the account token itself is kept nowhere in the browser (the page keeps the bot's)");
    const bot = kept.session["bete.play.token"] ?? "";
    check(bot.length > 10, "the account's new bot token is kept in the tab's session storage");
    const mine = await createClient(AccountService, createGrpcWebTransport({
      baseUrl: web, useBinaryFormat: true,
      interceptors: [(next) => (req) => { req.header.set("authorization", `Bearer ${token}`); return next(req); }],
    })).listAccountBots({});
    const who = await page.getByTestId("play-who").innerText();
    check(mine.bots.some((b) => who.includes(b.name)), `the page plays as a bot of the account (${who}; the account's bots: ${mine.bots.map((b) => b.name)})`);
    await page.getByTestId("play-seats").fill("3");
    await page.getByTestId("play-start").click();
    await page.waitForURL(/#\/play\/t_/);
    await ownHandOnly(page, 0, 3, "the account's player");
    const [clicks] = await clickUntilOver([page], "a game with an account token");
    check(clicks >= 3, `a whole game played by clicking (${clicks} clicks)`);
    tokenStaysHome(traffic, token, web, "the account token");
    tokenStaysHome(traffic, bot, web, "the account's bot token");
    step(`a pasted account token plays as a bot of the account (${clicks} clicks); the token went only to this server, in no URL`);

    // A page pointed at another server (?api=) plays nowhere: the token would leave home.
    await page.goto(`${web}/?api=http://127.0.0.1:9#/play`);
    await page.getByText("playing sends your token only to the server the page came from").waitFor();
    check(await page.getByTestId("play-token").count() === 0, "no token form on a page talking to another server");
    return clicks;
  } finally {
    await ctx.close();
  }
}

/** The page's WebSocket holds at most `limit` live streams: with that many opened on the tab's
 * socket (frames added by the test on the way to the server, their answers kept from the page),
 * the table page's own stream is refused and the page shows why, naming the limit. */
export async function subscriptionLimitShown(browser: Browser, web: string, tableId: string, limit = 16): Promise<string> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await ctx.newPage();
    const ours = (id: number) => id >= 0x70000000;
    let answered = 0;
    await page.routeWebSocket(/\/bete\.web\/mux$/, (ws) => {
      const server = ws.connectToServer();
      let filled = false;
      ws.onMessage((m) => {
        if (!filled) {
          filled = true;
          const json = Buffer.from(JSON.stringify({ path: "/bete.v1.TableService/WatchTable", headers: [["content-type", "application/grpc-web+proto"], ["x-grpc-web", "1"]] }));
          // WatchTableRequest { table_id }: field 1, a string.
          const id = Buffer.from(tableId);
          const msg = Buffer.concat([Buffer.from([0x0a, id.length]), id]);
          for (let i = 0; i < limit; i++) {
            const f = Buffer.alloc(9);
            f[0] = 1;
            f.writeUInt32BE(0x70000000 + i, 1);
            f.writeUInt32BE(json.length, 5);
            const body = Buffer.alloc(5);
            body.writeUInt32BE(msg.length, 1);
            server.send(Buffer.concat([f, json, body, msg]));
          }
        }
        server.send(m);
      });
      server.onMessage((m) => {
        const b = typeof m === "string" ? Buffer.from(m) : m;
        if (b.length >= 5 && ours(b.readUInt32BE(1))) { if (b[0] === 1) answered++; return; }
        ws.send(m);
      });
    });
    await page.goto(`${web}/#/table/${tableId}`);
    await page.getByRole("heading", { name: `Table ${tableId}` }).waitFor();
    const conn = page.getByTestId("conn").filter({ hasText: `at most ${limit} live streams` });
    await conn.waitFor({ timeout: 20_000 });
    const text = await conn.innerText();
    check(answered === limit, `the ${limit} streams the test opened were answered (${answered})`);
    check(!text.includes("● live"), `the page does not claim to be live: "${text}"`);
    step(`the page's WebSocket refuses a stream over ${limit} and the page says so: "${text}"`);
    return text;
  } finally {
    await ctx.close();
  }
}

