/**
 * Calls (SPEC 9.4): recent requests, filterable by model, account, key and outcome, new ones arriving
 * live; selecting one opens its route trace (candidates, decisions, attempts) and, when the flight
 * recorder kept them (SPEC O-6), the bodies: client request, each attempt's upstream request and reply,
 * and what the client received.
 */
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, qs } from "../api.ts";
import { ActionButton, Card, Empty, ErrorLine, Pill, useData, useDebounced } from "../components.tsx";
import { clockSeconds, count, ms, usd } from "../format.ts";
import { useLive } from "../live.ts";
import type { CallRow, Recording, RouteTrace } from "../types.ts";
import { SetupSnippets } from "./setup.tsx";

const OUTCOMES = ["", "ok", "error", "upstream_error", "client_closed", "rejected"];

/** A call's outcome as a pill. */
export function OutcomePill({ outcome, status }: { outcome: string; status?: number }) {
  const tone = outcome === "ok" ? "ok" : outcome === "client_closed" ? "off" : outcome === "rejected" ? "warn" : "bad";
  return (
    <Pill tone={tone}>
      {outcome}
      {status ? ` ${status}` : ""}
    </Pill>
  );
}

function selectedFromUrl(): string | undefined {
  return new URLSearchParams(location.search).get("id") ?? undefined;
}

function BodyView({ title, body }: { title: string; body?: { body: string; bytes: number; truncated: boolean } }) {
  if (!body) return null;
  let text = body.body;
  try {
    text = JSON.stringify(JSON.parse(body.body), null, 2);
  } catch {
    // not JSON (an SSE stream): shown as sent
  }
  return (
    <div class="recorded">
      <h3>
        {title} <span class="muted small">({count(body.bytes)} bytes{body.truncated ? ", truncated" : ""})</span>
      </h3>
      <pre class="body-view">{text}</pre>
    </div>
  );
}

/** `GET /settings`, the part the Calls page reads. */
interface RecorderSettings {
  settings: { flight_recorder?: { enabled?: boolean; max_requests?: number } };
  sources?: Record<string, string>;
}

function RecorderSwitch({ settings, changed }: { settings?: RecorderSettings; changed: () => void }) {
  const [error, setError] = useState<string | undefined>();
  if (!settings) return null;
  const fr = settings.settings.flight_recorder;
  if (fr?.enabled) return <p class="muted small">The flight recorder is on (last {fr.max_requests ?? 200} requests); this call's bodies are no longer held.</p>;
  return (
    <div class="recorder-off">
      <p class="muted small">Bodies are not recorded. The flight recorder keeps the last requests' client body, upstream bodies and events, secrets scrubbed (SPEC O-6).</p>
      <ActionButton
        small
        onClick={() =>
          api("/settings", { method: "PATCH", body: { flight_recorder: { enabled: true } } })
            .then(changed)
            .catch((e) => setError((e as Error).message))
        }
      >
        Turn on the flight recorder
      </ActionButton>
      <ErrorLine error={error} />
    </div>
  );
}

function TraceView({ call, recorder, recorderChanged, onSince }: { call: CallRow; recorder?: RecorderSettings; recorderChanged: () => void; onSince?: number }) {
  // Calls carry `recorded` when the API reports it; else a call is looked up while the recorder is on
  // (and, when this page turned it on, only calls that arrived after that).
  const recorded = call.recorded ?? (recorder?.settings.flight_recorder?.enabled === true && (onSince === undefined || call.ts >= onSince));
  const id = call.routeId ?? call.requestId;
  const trace = useData(() => api<RouteTrace>(`/route-traces/${encodeURIComponent(id)}`), [id]);
  const [rec, setRec] = useState<Recording | undefined>();
  const [recError, setRecError] = useState<string | undefined>();
  const [gone, setGone] = useState(false);
  useEffect(() => {
    setRec(undefined);
    setRecError(undefined);
    setGone(false);
    if (!recorded) return;
    api<Recording>(`/calls/${encodeURIComponent(id)}/recording`)
      .then(setRec)
      .catch((e) => (e instanceof ApiError && e.status === 404 ? setGone(true) : setRecError((e as Error).message)));
  }, [id, recorded]);
  const t = trace.data;
  return (
    <Card class="trace" title={<span class="mono">{id}</span>}>
      <dl class="kv">
        <dt>Requested</dt>
        <dd class="mono">{call.requestedModel}</dd>
        <dt>Served by</dt>
        <dd class="mono">{call.providerId ? `${call.providerId}/${call.model}` : "–"}</dd>
        <dt>Account</dt>
        <dd>{call.accountId ?? "–"}</dd>
        <dt>Key</dt>
        <dd>{call.keyName ?? "–"}</dd>
        <dt>Client format</dt>
        <dd>{call.clientFormat}</dd>
        <dt>Outcome</dt>
        <dd>
          <OutcomePill outcome={call.outcome} status={call.status} />
          {call.fallback && <Pill tone="warn">fallback</Pill>}
        </dd>
        <dt>Timing</dt>
        <dd>
          first byte {ms(call.ttfbMs)} · total {ms(call.totalMs)}
        </dd>
        <dt>Tokens</dt>
        <dd>
          {count(call.usage.inputTokens)} in · {count(call.usage.outputTokens)} out
          {call.usage.cacheReadTokens ? ` · ${count(call.usage.cacheReadTokens)} cache read` : ""}
          {call.usage.cacheWriteTokens ? ` · ${count(call.usage.cacheWriteTokens)} cache write` : ""}
          {call.estimated ? " (estimated)" : ""}
        </dd>
        <dt>Cost</dt>
        <dd>{call.unpriced ? "unknown (this model has no price)" : call.costUsd !== undefined ? `${usd(call.costUsd)} at API prices` : "–"}</dd>
      </dl>
      <ErrorLine error={trace.error} />
      {t && (
        <div class="trace-body">
          <h3>Candidates</h3>
          <p class="mono small">{t.candidates.join(" → ") || "none"}</p>
          {t.decisions.length > 0 && (
            <>
              <h3>Decisions</h3>
              {t.decisions.map((d, i) => (
                <div key={i} class={`decision decision-${d.verdict}`}>
                  <strong class="mono">{d.subject}</strong> <span class="muted">{d.verdict}</span> — {d.reason}
                </div>
              ))}
            </>
          )}
          <h3>Attempts</h3>
          {t.attempts.length === 0 && <p class="muted">No upstream attempt{call.outcome === "ok" ? " (answered locally)" : ""}.</p>}
          {t.attempts.map((a, i) => (
            <div key={i} class={`attempt ${a.status !== undefined && a.status < 400 && !a.error ? "attempt-ok" : "attempt-bad"}`} data-attempt={i + 1}>
              <div>
                <strong>#{i + 1}</strong> <span class="mono">{a.target}</span>
                {a.accountId ? ` on ${a.accountId}` : ""} · {a.status ?? "no status"} · started +{ms(a.startMs)}
                {a.durationMs !== undefined ? `, took ${ms(a.durationMs)}` : ""}
              </div>
              {a.classification && (
                <div class="muted small">
                  {a.classification}
                  {a.effect ? ` → ${a.effect}` : ""}
                </div>
              )}
              {a.error && <div class="small held-text">{a.error}</div>}
            </div>
          ))}
          {t.warnings.length > 0 && (
            <>
              <h3>Warnings</h3>
              {t.warnings.map((w, i) => (
                <p key={i} class="small">
                  {String(w.message ?? w.code ?? JSON.stringify(w))}
                </p>
              ))}
            </>
          )}
          {t.tokenSaver && "results" in t.tokenSaver && (
            <p class="small">
              Token savers shortened {t.tokenSaver.results} tool results, saving about {count(t.tokenSaver.tokensSaved)} tokens.
            </p>
          )}
        </div>
      )}
      {recorded && (rec || recError) && (
        <div class="recording">
          <h3>Flight recorder</h3>
          <ErrorLine error={recError} />
          {rec && (
            <div class="side-by-side">
              <BodyView title={`Client request (${rec.clientFormat})`} body={rec.client} />
              <BodyView title={`Sent to the client${rec.response ? ` (${rec.response.status})` : ""}`} body={rec.response} />
              {rec.attempts.map((a) => (
                <Fragment key={a.n}>
                  <BodyView title={`Attempt ${a.n}: sent to ${a.target} (${a.upstreamFormat})`} body={a.request} />
                  <BodyView title={`Attempt ${a.n}: upstream reply${a.status ? ` (${a.status})` : ""}`} body={a.reply} />
                </Fragment>
              ))}
            </div>
          )}
        </div>
      )}
      {(!recorded || gone) && <RecorderSwitch settings={recorder} changed={recorderChanged} />}
    </Card>
  );
}

/** How many calls the page lists (the newest). */
const CALLS_SHOWN = 200;

export function CallsPage() {
  const [filters, setFilters] = useState({ model: "", account: "", key: "", outcome: "" });
  const [selected, setSelected] = useState<string | undefined>(selectedFromUrl());
  const recorder = useData(() => api<RecorderSettings>("/settings"));
  const [onSince, setOnSince] = useState<number | undefined>();
  const calls = useData(() => api<{ calls: CallRow[] }>(`/calls${qs({ limit: CALLS_SHOWN, ...filters })}`), [filters.model, filters.account, filters.key, filters.outcome]);
  const seen = useRef<Set<string> | undefined>(undefined);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const refresh = useDebounced(calls.reload, 250);
  useLive((e) => {
    if (e.type === "request_finished" || e.type === "hello") refresh();
  });
  useEffect(() => {
    const rows = calls.data?.calls;
    if (!rows) return;
    if (seen.current) setFresh(new Set(rows.map((r) => r.requestId).filter((id) => !seen.current!.has(id))));
    seen.current = new Set(rows.map((r) => r.requestId));
  }, [calls.data]);
  const select = (c: CallRow) => {
    const id = c.routeId ?? c.requestId;
    setSelected(id);
    history.replaceState(null, "", `/dashboard/calls?id=${encodeURIComponent(id)}`);
  };
  // The filters go to the API and are applied here as well (exact match; the model filter matches the
  // requested name or the provider/model that served), so the list is right whatever the API filters.
  const rows = (calls.data?.calls ?? []).filter(
    (c) =>
      (!filters.model || c.requestedModel === filters.model || `${c.providerId}/${c.model}` === filters.model) &&
      (!filters.account || c.accountId === filters.account) &&
      (!filters.key || c.keyName === filters.key) &&
      (!filters.outcome || c.outcome === filters.outcome),
  );
  const current = rows.find((c) => (c.routeId ?? c.requestId) === selected);
  const set = (k: keyof typeof filters) => (e: Event) => setFilters({ ...filters, [k]: (e.target as HTMLInputElement).value.trim() });
  const filtered = Object.values(filters).some((v) => v !== "");
  return (
    <div class="page page-wide">
      <header class="page-head">
        <div>
          <h1>Calls</h1>
          <p class="muted">The most recent requests, newest first; new ones appear as they finish.</p>
        </div>
        <form class="form-row filters" onSubmit={(e) => e.preventDefault()}>
          <div class="field">
            <label for="f-model">Model</label>
            <input id="f-model" name="model" placeholder="any" onChange={set("model")} />
          </div>
          <div class="field">
            <label for="f-account">Account</label>
            <input id="f-account" name="account" placeholder="any" onChange={set("account")} />
          </div>
          <div class="field">
            <label for="f-key">Key</label>
            <input id="f-key" name="key" placeholder="any" onChange={set("key")} />
          </div>
          <div class="field">
            <label for="f-outcome">Outcome</label>
            <select id="f-outcome" name="outcome" onChange={set("outcome")}>
              {OUTCOMES.map((o) => (
                <option key={o} value={o}>
                  {o || "any"}
                </option>
              ))}
            </select>
          </div>
        </form>
      </header>
      <ErrorLine error={calls.error} />
      {calls.data && rows.length === 0 && !filtered && (
        <Card>
          <Empty title="No traffic yet">
            <p>Point a coding agent at this gateway; its requests show up here as they finish.</p>
          </Empty>
          <SetupSnippets compact />
        </Card>
      )}
      {calls.data && rows.length === 0 && filtered && <p class="muted">No call matches these filters.</p>}
      {rows.length > 0 && (
        <div class={current ? "split" : ""}>
          <Card>
            <div class="table-wrap">
              <table class={`calls ${current ? "compact" : ""}`}>
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>Model</th>
                    <th data-opt="1">Served by</th>
                    <th data-opt="1">Account</th>
                    <th data-opt="1">Key</th>
                    <th>Outcome</th>
                    <th data-opt="1" class="num">Tokens in/out</th>
                    <th data-opt="1" class="num">Cost</th>
                    <th class="num">Total</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((c) => {
                    const id = c.routeId ?? c.requestId;
                    return (
                      <tr key={c.requestId} data-route-id={id} class={`clickable ${id === selected ? "selected" : ""} ${fresh.has(c.requestId) ? "fresh" : ""}`} onClick={() => select(c)}>
                        <td class="nowrap">{clockSeconds(c.ts)}</td>
                        <td class="mono">
                          {c.requestedModel || "–"}
                          {c.fallback && current && (
                            <>
                              {" "}
                              <Pill tone="warn">fallback</Pill>
                            </>
                          )}
                        </td>
                        <td class="mono" data-opt="1">
                          {c.providerId ? `${c.providerId}/${c.model}` : "–"}
                          {c.fallback && (
                            <>
                              {" "}
                              <Pill tone="warn">fallback</Pill>
                            </>
                          )}
                        </td>
                        <td data-opt="1">{c.accountId ?? "–"}</td>
                        <td data-opt="1">{c.keyName ?? "–"}</td>
                        <td>
                          <OutcomePill outcome={c.outcome} status={c.status} />
                        </td>
                        <td class="num" data-opt="1">
                          {count(c.usage.inputTokens)} / {count(c.usage.outputTokens)}
                        </td>
                        <td class="num" data-opt="1">{c.unpriced ? <span class="muted" title="This model has no price">unpriced</span> : usd(c.costUsd)}</td>
                        <td class="num">{ms(c.totalMs)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            {(calls.data?.calls.length ?? 0) >= CALLS_SHOWN && (
              <p class="muted small calls-capped">
                The newest {CALLS_SHOWN} calls{filtered ? " matching these filters" : ""}; older ones are not listed here. Narrow the list with the filters, or read up to 1,000 with{" "}
                <code>switchyard calls list --limit 1000</code> (<code>GET /admin/api/calls?limit=1000</code>).
              </p>
            )}
          </Card>
          {current && (
            <TraceView
              call={current}
              recorder={recorder.data}
              onSince={onSince}
              recorderChanged={() => {
                setOnSince(Date.now());
                recorder.reload();
              }}
            />
          )}
        </div>
      )}
    </div>
  );
}
