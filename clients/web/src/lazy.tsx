// A page whose module loads on first use (a separate chunk of the build).
import type { ComponentType, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { errorText } from "./errors";

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): (props: P) => JSX.Element {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  return (props: P) => {
    const [, setReady] = useState(0);
    const [error, setError] = useState("");
    useEffect(() => {
      if (loaded) return;
      loading ??= load();
      loading.then((c) => { loaded = c; setReady(1); }, (e) => { loading = null; setError(errorText(e)); });
    }, []);
    if (loaded) { const C = loaded; return <C {...props} />; }
    return <main><p role="status">{error ? <span class="error">cannot load this page: {error}</span> : "loading…"}</p></main>;
  };
}
