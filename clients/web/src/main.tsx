// The bete web page: lobby, live tables, replays (and ladders), routed by the URL's hash.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Lobby } from "./lobby";
import { ThemeToggle } from "./theme";
import { lazyPage } from "./lazy";
const LiveTable = lazyPage(() => import("./table").then((m) => m.LiveTable));
const Tv = lazyPage(() => import("./tv").then((m) => m.Tv));
const Glossary = lazyPage(() => import("./rules").then((m) => m.Glossary));

// Pages past the lobby and a live table load when first visited: the first load stays small.
const Replay = lazyPage(() => import("./replay").then((m) => m.Replay));
const Play = lazyPage(() => import("./play").then((m) => m.Play));
const BotAnywhere = lazyPage(() => import("./ladders").then((m) => m.BotAnywhere));
const BotPage = lazyPage(() => import("./ladders").then((m) => m.BotPage));
const LadderBoard = lazyPage(() => import("./ladders").then((m) => m.LadderBoard));
const SetReplay = lazyPage(() => import("./set").then((m) => m.SetReplay));
const Ladders = lazyPage(() => import("./ladders").then((m) => m.Ladders));
import "./style.css";

function route(): string[] {
  return location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
}

function App() {
  const [path, setPath] = useState(route());
  useEffect(() => {
    const on = () => { setPath(route()); window.scrollTo(0, 0); };
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  const [page, id, sub, botId] = path;
  let body;
  if (page === "table" && id) body = <LiveTable id={id} />;
  else if (page === "replay") body = <Replay id={id} step={sub} />;
  else if (page === "bot" && id) body = <BotAnywhere botId={id} />;
  else if (page === "play") body = <Play tableId={id} />;
  else if (page === "tv") body = <Tv />;
  else if (page === "set" && id) body = <SetReplay ids={id.split(",").filter(Boolean)} />;
  else if (page === "glossary") body = <Glossary />;
  else if (page === "ladders" && id && sub === "bot" && botId) body = <BotPage ladderId={id} botId={botId} />;
  else if (page === "ladders" && id) body = <LadderBoard id={id} />;
  else if (page === "ladders") body = <Ladders />;
  else body = <Lobby />;
  const here = page ?? "lobby";
  return (
    <>
      <a class="skip" href="#content" onClick={(e) => { e.preventDefault(); document.getElementById("content")?.focus(); }}>Skip to content</a>
      <header class="top">
        <a class="brand" href="#/">bete</a>
        <nav aria-label="main">
          <a href="#/" aria-current={here === "lobby" || here === "table" ? "page" : undefined}>Tables</a>
          <a href="#/play" aria-current={here === "play" ? "page" : undefined}>Play</a>
          <a href="#/replay" aria-current={here === "replay" ? "page" : undefined}>Replays</a>
          <a href="#/ladders" aria-current={here === "ladders" || here === "bot" ? "page" : undefined}>Ladders</a>
        </nav>
        <ThemeToggle />
      </header>
      <div id="content" tabIndex={-1}>{body}</div>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
