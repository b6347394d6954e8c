/**
 * The dashboard app (SPEC 9.4): a Preact single-page app served under /dashboard. The server decides
 * which view the page boots into (`<body data-view="app|login">`); every figure comes from the admin
 * API (./api.ts) and live events (./live.ts).
 */
import type { ComponentType } from "preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import { mountAnnouncer } from "./announce.ts";
import { csrfToken } from "./api.ts";
import { connectLive, useLiveState } from "./live.ts";
import { beginSignOut, reloadToSignIn } from "./session-ended.ts";
import { AccountsPage } from "./pages/accounts.tsx";
import { CallsPage } from "./pages/calls.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { LoginPage } from "./pages/login.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { RoutingPage } from "./pages/routing.tsx";
import { SetupPage } from "./pages/setup.tsx";
import { UsagePage } from "./pages/usage.tsx";

const PAGES: Array<{ id: string; label: string; view: ComponentType }> = [
  { id: "overview", label: "Overview", view: OverviewPage },
  { id: "accounts", label: "Accounts", view: AccountsPage },
  { id: "routing", label: "Routing", view: RoutingPage },
  { id: "calls", label: "Calls", view: CallsPage },
  { id: "usage", label: "Usage", view: UsagePage },
  { id: "keys", label: "Keys", view: KeysPage },
  { id: "setup", label: "Setup", view: SetupPage },
];

/** The page id of the current path (`/dashboard/accounts` → `accounts`). */
function currentPage(): string {
  const id = location.pathname.replace(/^\/dashboard\/?/, "").split("/")[0];
  return PAGES.some((p) => p.id === id) ? id : PAGES[0].id;
}

/** Moves to another page without a reload. */
export function navigate(path: string): void {
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

function LiveBadge() {
  const s = useLiveState();
  const label = s === "live" ? "Live" : s === "connecting" ? "Connecting…" : s === "stopped" ? "Gateway stopped: reconnecting…" : "Reconnecting…";
  return (
    <span class={`live live-${s}`} title="Server-Sent Events from /admin/api/events">
      <span class="live-dot" />
      {label}
    </span>
  );
}

function App() {
  const [page, setPage] = useState(currentPage());
  useEffect(() => {
    const on = () => setPage(currentPage());
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  useEffect(() => {
    document.title = `${PAGES.find((p) => p.id === page)?.label ?? ""} · switchyard`;
  }, [page]);
  const mode = document.querySelector<HTMLMetaElement>('meta[name="access-mode"]')?.content;
  const View = PAGES.find((p) => p.id === page)!.view;
  const signOut = async () => {
    beginSignOut();
    await fetch("/dashboard/logout", { method: "POST", headers: { "x-csrf-token": csrfToken() }, credentials: "same-origin" });
    reloadToSignIn("signed_out_here", "/dashboard");
  };
  return (
    <div class="shell">
      <nav class="side">
        <div class="brand">
          <span class="brand-mark">⇄</span> switchyard
        </div>
        <ul>
          {PAGES.map((p) => (
            <li key={p.id}>
              <a
                href={`/dashboard/${p.id}`}
                class={p.id === page ? "active" : ""}
                data-page={p.id}
                onClick={(e) => {
                  if (e.metaKey || e.ctrlKey || e.shiftKey) return;
                  e.preventDefault();
                  navigate(`/dashboard/${p.id}`);
                }}
              >
                {p.label}
              </a>
            </li>
          ))}
        </ul>
        <div class="side-foot">
          <LiveBadge />
          {mode === "session" ? (
            <button type="button" class="btn btn-small btn-ghost" onClick={() => void signOut()}>
              Sign out
            </button>
          ) : (
            <span class="muted small" title="A local caller needs no key while server.require_api_key is off">
              local access
            </span>
          )}
        </div>
      </nav>
      <main class="content" data-page={page}>
        <View />
      </main>
    </div>
  );
}

const root = document.getElementById("app")!;
if (document.body.dataset.view === "login") {
  render(<LoginPage />, root);
} else {
  connectLive();
  mountAnnouncer();
  render(<App />, root);
}
