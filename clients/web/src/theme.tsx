// The dark-mode toggle: the system's choice until the visitor picks one, kept in localStorage.
import { useState } from "preact/hooks";

type Theme = "system" | "light" | "dark";
const KEY = "bete.theme";

function apply(t: Theme) {
  if (t === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}

const saved = (localStorage.getItem(KEY) as Theme | null) ?? "system";
apply(saved);

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(saved);
  const next: Record<Theme, Theme> = { system: "dark", dark: "light", light: "system" };
  return (
    <button
      type="button"
      class="theme"
      data-testid="theme"
      aria-label={`colours: ${theme === "system" ? "as the system" : theme}; change`}
      onClick={() => {
        const t = next[theme];
        setTheme(t);
        apply(t);
        if (t === "system") localStorage.removeItem(KEY); else localStorage.setItem(KEY, t);
      }}
    >
      {theme === "dark" ? "☾ dark" : theme === "light" ? "☀ light" : "◐ auto"}
    </button>
  );
}
