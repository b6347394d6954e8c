/**
 * The config file's reloads on the dashboard (SPEC 2.3, 9.3 `POST /admin/api/config/reload`, 9.4): a
 * card on the Routing page with a Reload button, and what the last reload answered, shown in place
 * without a page reload: what changed (ids per section, settings and server keys; the server never
 * sends values), each changed setting that takes effect only at a restart with the server's sentence
 * (`restartNeeded`), the file's warnings, or why the file was refused (the old configuration stays) or
 * cannot be reloaded (409: no config file). A reload triggered elsewhere while the page is open (the
 * file changed, SIGHUP, `switchyard reload`, another browser) arrives as the `config_reloaded` live
 * event and is shown the same way. Before any reload the card names the file the instance reads. The
 * button's call goes through ./api.ts (same origin, the session cookie, the page's CSRF token); every
 * part of an answer is rendered as text.
 */
import { useState } from "preact/hooks";
import { describeReload, type ConfigChanges, type FileChange } from "../../config/describe-changes.ts";
import { api, ApiError } from "./api.ts";
import { ActionButton, Card, useData } from "./components.tsx";
import { useLive } from "./live.ts";

/** The admin API's answer to an accepted reload (src/admin/config-routes.ts). */
export interface ReloadAnswer {
  reloaded: true;
  file: string;
  changed: ConfigChanges;
  /** When nothing changed: the last re-read of the file that changed something. */
  lastFileChange?: FileChange;
  restartNeeded: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
}

/** The last reload's outcome: its answer, or the refusal's message. */
type Outcome = ({ ok: true; answer: ReloadAnswer } | { ok: false; message: string }) & { at: number };

/** The card: the Reload button and the last reload's answer (this page's, or one seen live). */
export function ConfigReloadCard() {
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  // Which file this instance reads (`GET /admin/api/settings`'s `file`; null on the built-in default),
  // named before any reload: the operator should not have to reload to learn which file it is.
  const settings = useData(() => api<{ file?: string | null }>("/settings"));
  const file = settings.data?.file;
  const reload = () =>
    api<ReloadAnswer>("/config/reload", { method: "POST" })
      .then((answer) => setOutcome({ ok: true, answer, at: Date.now() }))
      .catch((e: unknown) => setOutcome({ ok: false, message: e instanceof ApiError || e instanceof Error ? e.message : String(e), at: Date.now() }));
  useLive((e) => {
    if (e.type !== "config_reloaded") return;
    // The button's own reload sends this event too, just before or after its answer: both say the same.
    if (e.error !== undefined) setOutcome({ ok: false, message: `Config reload rejected; the previous config stays in force: ${e.error}`, at: e.at });
    else setOutcome({ ok: true, answer: { reloaded: true, file: e.file, changed: e.changed, lastFileChange: e.lastFileChange, restartNeeded: e.restartNeeded, warnings: e.warnings }, at: e.at });
  });
  return (
    <Card
      title="Config file"
      class="config-reload"
      actions={
        <ActionButton small onClick={reload} title="Re-read the config file now (as switchyard reload and SIGHUP do)">
          Reload config file
        </ActionButton>
      }
    >
      {!outcome && (
        <p class="muted small" data-reload="file">
          {settings.data && !file ? (
            "This instance started on the built-in default configuration: there is no config file to reload. A config file written now is read after a restart (switchyard stop, then switchyard start): some of its settings (server.host, server.port, server.database) take effect only at start."
          ) : (
            <>
              {file && (
                <>
                  This instance reads <span class="mono">{file}</span>.{" "}
                </>
              )}
              The file is re-read when it changes and on SIGHUP. A file with errors is refused and the running configuration stays.
            </>
          )}
        </p>
      )}
      {outcome?.ok === false && (
        <p class="test-result test-bad" role="alert" data-reload="rejected">
          {outcome.message}
        </p>
      )}
      {outcome?.ok && (
        <div data-reload="accepted" role="status">
          <p class="test-result test-ok" data-reload="changes">
            Reloaded <span class="mono">{outcome.answer.file}</span> at {new Date(outcome.at).toLocaleTimeString()}: {describeReload(outcome.answer.changed ?? {}, outcome.answer.lastFileChange, (ms) => new Date(ms).toLocaleTimeString())}.
          </p>
          {(outcome.answer.restartNeeded ?? []).length > 0 && (
            <div class="notice" data-reload="restart-needed">
              <span>
                <strong>Restart needed.</strong>{" "}
                {outcome.answer.restartNeeded.map((r) => (
                  <span key={r.path} class="reload-line" data-path={r.path}>
                    {r.message}
                  </span>
                ))}
              </span>
            </div>
          )}
          {(outcome.answer.warnings ?? []).map((w) => (
            <p key={`${w.path}:${w.message}`} class="held-text small" data-reload="warning">
              warning: <span class="mono">{w.path}</span>: {w.message}
            </p>
          ))}
        </div>
      )}
    </Card>
  );
}
