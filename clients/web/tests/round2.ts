// Browser checks of the page's second round (issue 28): each fails on the page before it.
// Called by browser.ts with its server, browser and helpers.
import type { Browser, BrowserContext, Page } from "playwright-core";

export function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`FAILED: ${what}`);
}
const step = (s: string) => console.log(`web: ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

/** The first load of the page over the wire: bytes received (headers and bodies, as the
 * browser counts them) and the encodings of the script and style sheet. */
export async function firstLoad(browser: Browser, web: string) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Network.enable", {});
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  const files = new Map<string, { url: string; bytes: number; encoding: string }>();
  cdp.on("Network.responseReceived", (e) => {
    if (e.type === "Document" || e.type === "Script" || e.type === "Stylesheet") {
      const h = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
      files.set(e.requestId, { url: e.response.url, bytes: 0, encoding: h["content-encoding"] ?? "identity" });
    }
  });
  cdp.on("Network.loadingFinished", (e) => {
    const f = files.get(e.requestId);
    if (f) f.bytes = e.encodedDataLength;
  });
  await page.goto(`${web}/`);
  await page.getByRole("heading", { name: "Tables" }).waitFor();
  await page.locator("tr[data-table]").first().waitFor({ timeout: 15_000 });
  await sleep(300);
  const list = [...files.values()];
  const total = list.reduce((n, f) => n + f.bytes, 0);
  await ctx.close();
  return { total, files: list };
}

/** `n` table pages open at once in one browser (one connection pool): every one goes live and
 * shows events. Over HTTP/1.1 with a stream per tab the seventh waited for a free connection. */
export async function manyTabs(browser: Browser, web: string, ids: string[]) {
  const ctx = await browser.newContext({ viewport: { width: 800, height: 600 } });
  const pages: Page[] = [];
  for (const id of ids) {
    const p = await ctx.newPage();
    await p.goto(`${web}/#/table/${id}`);
    pages.push(p);
  }
  for (const [i, p] of pages.entries()) {
    await p.getByTestId("conn").filter({ hasText: "live" }).waitFor({ timeout: 20_000 }).catch(() => {
      throw new Error(`FAILED: tab ${i + 1} of ${ids.length} never went live`);
    });
    await p.locator('[data-testid="log"] li').first().waitFor({ timeout: 20_000 });
  }
  // And the lobby still loads in yet another tab.
  const lobby = await ctx.newPage();
  await lobby.goto(`${web}/`);
  await lobby.locator("tr[data-table]").first().waitFor({ timeout: 10_000 });
  await ctx.close();
  step(`${ids.length} table tabs live at once, and the lobby loads beside them`);
}

/** Sideways overflow measured for real: the page's width against the phone's 390 px, and any
 * element reaching past the right edge (outside a scrolling box). */
export async function phoneOverflow(page: Page, what: string) {
  const r = await page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const bad: string[] = [];
    const scrolls = (e: Element | null): boolean => {
      for (let x = e?.parentElement; x; x = x.parentElement) {
        const o = getComputedStyle(x).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden") return true;
      }
      return false;
    };
    for (const e of document.body.querySelectorAll("*")) {
      const b = e.getBoundingClientRect();
      if (b.width === 0 || b.height === 0) continue;
      if (b.right > vw + 0.5 && !scrolls(e)) bad.push(`${e.tagName.toLowerCase()}.${[...e.classList].join(".")} right ${b.right.toFixed(0)}`);
    }
    return { vw, inner: innerWidth, doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, bad: bad.slice(0, 5) };
  });
  check(r.vw === 390 && r.inner === 390, `${what}: the phone's layout viewport is its 390 px (${r.vw}, inner ${r.inner}): nothing widened it`);
  check(r.doc <= r.vw && r.body <= r.vw, `${what}: no sideways scrolling on a phone (page ${r.doc} px, body ${r.body} px on ${r.vw})`);
  check(r.bad.length === 0, `${what}: no element past the phone's right edge: ${r.bad.join("; ")}`);
}

/** Seat names are not cut where they fit, and carry their full name as a title. */
export async function seatNames(page: Page, what: string) {
  const names = await page.evaluate(() => [...document.querySelectorAll(".seat .name")].map((e) => ({
    title: e.getAttribute("title") ?? "", text: (e.textContent ?? "").trim(), cut: e.scrollWidth > e.clientWidth + 1, width: e.clientWidth,
  })));
  check(names.length > 0, `${what}: seats shown`);
  for (const n of names) {
    check(n.title && n.text.includes(n.title), `${what}: the seat name "${n.text}" has its name as a title (${n.title})`);
    check(!n.cut, `${what}: the seat name "${n.text}" is not cut in its ${n.width} px`);
  }
}

/** WCAG contrast of the text of `selector` against what is behind it (opacity included). */
export async function contrast(page: Page, selector: string): Promise<{ text: string; ratio: number }[]> {
  return page.evaluate((sel) => {
    const parse = (c: string) => { const m = c.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0, 1]; return { r: m[0], g: m[1], b: m[2], a: m[3] ?? 1 }; };
    const lum = (c: { r: number; g: number; b: number }) => {
      const f = (v: number) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const mix = (top: { r: number; g: number; b: number; a: number }, under: { r: number; g: number; b: number }) => ({
      r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a),
    });
    const out: { text: string; ratio: number }[] = [];
    for (const e of document.querySelectorAll(sel)) {
      // What is behind: the backgrounds of the element and its ancestors, composed bottom up.
      const chain: Element[] = [];
      for (let x: Element | null = e; x; x = x.parentElement) chain.push(x);
      let bg = { r: 255, g: 255, b: 255 };
      let opacity = 1;
      for (const x of chain.reverse()) {
        const s = getComputedStyle(x);
        bg = mix(parse(s.backgroundColor), bg);
        opacity *= Number(s.opacity);
      }
      const fg = parse(getComputedStyle(e).color);
      const seen = mix({ ...fg, a: fg.a * opacity }, bg);
      const [l1, l2] = [lum(seen), lum(bg)].sort((a, b) => b - a);
      out.push({ text: (e.textContent ?? "").trim().slice(0, 40), ratio: (l1 + 0.05) / (l2 + 0.05) });
    }
    return out;
  }, selector);
}

export async function contrastAtLeast(page: Page, selector: string, what: string, min = 4.5) {
  const rs = await contrast(page, selector);
  check(rs.length > 0, `${what}: ${selector} shown`);
  for (const r of rs) check(r.ratio >= min, `${what}: "${r.text}" has contrast ${r.ratio.toFixed(2)}:1, at least ${min}:1`);
  return Math.min(...rs.map((r) => r.ratio));
}

/** Plays a whole game on #/play by clicking: a guest token, a table against house bots, then a
 * legal action each time the page offers some, until the match is over. */
export async function playByClicking(ctx: BrowserContext, web: string) {
  const page = await ctx.newPage();
  const urls: string[] = [];
  page.on("request", (r) => urls.push(r.url()));
  page.on("framenavigated", (f) => urls.push(f.url()));
  await page.goto(`${web}/#/play`);
  await page.getByTestId("play-guest").click();
  await page.getByTestId("play-who").waitFor();
  const token = await page.evaluate(() => sessionStorage.getItem("bete.play.token") ?? "");
  check(token.length > 10, "the guest's token is kept in the tab's session storage");
  check(await page.evaluate(() => Object.values(localStorage).every((v) => !v.includes(sessionStorage.getItem("bete.play.token") ?? "-"))), "the token is not in local storage");
  await page.getByTestId("play-seats").fill("3");
  await page.getByTestId("play-start").click();
  await page.waitForURL(/#\/play\/t_/);
  let clicks = 0;
  let checkedHidden = false;
  for (let i = 0; i < 400; i++) {
    const next = await Promise.race([
      page.locator("button[data-action]").first().waitFor({ timeout: 60_000 }).then(() => "act"),
      page.getByTestId("play-over").waitFor({ timeout: 60_000 }).then(() => "over"),
    ]);
    if (next === "over") break;
    if (!checkedHidden) {
      // Our own hand face up, every other hand face down.
      const mine = await page.locator('[data-testid="hand-0"] [data-card]').count();
      const others = await page.locator('[data-testid="hand-1"] [data-card], [data-testid="hand-2"] [data-card]').count();
      check(mine > 0 && others === 0, `a player sees their own hand only (${mine} own cards up, ${others} others')`);
      checkedHidden = true;
    }
    const buttons = page.locator("button[data-action]");
    const actions = await buttons.evaluateAll((bs) => bs.map((b) => b.getAttribute("data-action") ?? ""));
    check(actions.every((a) => /^[a-z]+( [2-9TJQKA][SHDC])*$/.test(a)), `legal actions carry their notation: ${actions}`);
    await buttons.first().click().catch(() => { /* the list changed under the click: the loop looks again */ });
    clicks++;
    await sleep(50);
  }
  await page.getByTestId("play-over").waitFor({ timeout: 5_000 });
  check(clicks >= 3, `a whole game played by clicking (${clicks} clicks)`);
  check(!urls.some((u) => u.includes(token)), "the token never appears in a URL");
  await page.close();
  step(`a whole game played by clicking legal actions (${clicks} clicks); the token stays in the tab`);
  return clicks;
}
