/**
 * Calls (SPEC 9.4): recent requests, filterable by model, account, key, outcome and transport (and instance,
 * when several instances on one store served them: an Instance column then), new ones arriving live; a
 * call that came over Codex's Responses WebSocket has a WS badge, one recorded before switchyard kept
 * how a call came a "via ?" one; selecting one opens its route trace (candidates, decisions, attempts) and, when the flight
 * recorder kept them (SPEC O-6), the bodies: client request, each attempt's upstream request and reply,
 * and what the client received. An id in the address or the Call id field opens that call whatever page
 * it is on; a row's time is the button that opens it by keyboard; the filters suggest names
 * (calls-find.tsx). A call's cost (partly unpriced when a model it used has no price) and its web
 * searches: call-cost.tsx.
 */
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, qs } from "../api.ts";
import { ActionButton, Breakable, Card, Empty, ErrorLine, Pill, useData, useDebounced } from "../components.tsx";
import { clockSeconds, count, dateIfNotToday, ms, usdColumn } from "../format.ts";
import { useLive } from "../live.ts";
import type { CallRow, Recording, RouteTrace } from "../types.ts";
import { answeredErrorHead, refreshLines, tokenSaverSentence } from "../../../../pipeline/trace-words.ts";
import { SetupSnippets } from "./setup.tsx";
import { TRANSPORTS, TransportBadge, transportText } from "./call-transport.tsx";
import { CutReply, cutAfterCommit, OutcomePill } from "./call-outcome.tsx";
import { columnCosts, CostCell, CostText, SearchesPart, SearchesRow } from "./call-cost.tsx";
import { CallIdSearch, callIdOf, EmptyFilterNote, FilterLists, focusRowOf, isCall, type KeptSettings, NoSuchCall, onPick, useCallById, useKnownNames, useTraceFocus } from "./calls-find.tsx";

const OUTCOMES = ["", "ok", "error", "upstream_error", "client_closed", "rejected"];

function selectedFromUrl(): string | undefined {
  return new URLSearchParams(location.search).get("id") ?? undefined;
}

function BodyView({ title, body, note }: { title: string; body?: { body: string; bytes: number; truncated: boolean; frames?: string[] }; note?: string }) {
  if (!body) return null;
  let text = body.body;
  // A WebSocket reply's frames stay one a line, as sent (one frame alone would otherwise be pretty-printed);
  // their bytes are the recording's less the line break kept after each.
  if (!body.frames) {
    try {
      text = JSON.stringify(JSON.parse(body.body), null, 2);
    } catch {
      // not JSON (an SSE stream): shown as sent
    }
  }
  return (
    <div class="recorded">
      <h3>
        {title} <span class="muted small">({count(body.frames && !body.truncated ? body.bytes - body.frames.length : body.bytes)} bytes{body.truncated ? ", truncated" : ""})</span>
      </h3>
      {note && <p class="muted small body-note">{note}</p>}
      <pre class={body.frames ? "body-view frames" : "body-view"}>{text}</pre>
    </div>
  );
}

/** `GET /settings`, the part the Calls page reads. */
interface RecorderSettings {
  settings: { flight_recorder?: { enabled?: boolean; max_requests?: number } } & KeptSettings;
  sources?: Record<string, string>;
}

function RecorderSwitch({ settings, changed }: { settings?: RecorderSettings; changed: () => void }) {
  const [error, setError] = useState<string | undefined>();
  if (!settings) return null;
  const fr = settings.settings.flight_recorder;
  // Not "no longer held": a call from before the recorder was turned on never was (newuser12b, H13).
  if (fr?.enabled) {
    return (
      <p class="muted small recorder-on">
        The flight recorder is on: it keeps the last {fr.max_requests ?? 200} requests served since it was turned on, and this call is not among them (it came before the
        recorder was on, or {fr.max_requests ?? 200} requests have come since). Repeat the request to record it.
      </p>
    );
  }
  return (
    <div class="recorder-off">
      <p class="muted small">Bodies are not recorded. The flight recorder keeps the last requests' client body, upstream bodies and events, secrets scrubbed.</p>
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

/**
 * Whether a model served (part of) this call's reply: a finished one, one cut after the commit point
 * (`upstream_error`) or one its client left. A call that ended in an error before any reply (`error`,
 * `rejected`) still names the last target it tried, which served nothing: the list shows "–" under
 * Served by and the trace calls it the last target.
 */
function served(c: CallRow): boolean {
  return c.outcome !== "error" && c.outcome !== "rejected";
}

function TraceView({ call, recorder, recorderChanged, onSince, onClose }: { call: CallRow; recorder?: RecorderSettings; recorderChanged: () => void; onSince?: number; onClose: () => void }) {
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
  // On a phone the trace stands under the list (up to 200 rows): a tapped row seemed to do nothing. Bring
  // it into view when a call is chosen; beside the list (wider screens, sticky) it is in view already.
  useEffect(() => {
    const card = document.querySelector<HTMLElement>(".trace");
    if (card && card.getBoundingClientRect().top >= innerHeight) card.scrollIntoView({ block: "start" });
  }, [id]);
  const t = trace.data;
  return (
    <Card
      class="trace"
      title={
        <span class="mono trace-id" tabIndex={-1}>
          {id}
        </span>
      }
      actions={
        <button type="button" class="btn btn-small trace-close" onClick={onClose} title="Close the trace and go back to its row (Esc)">
          Close
        </button>
      }
    >
      <dl class="kv">
        <dt>Arrived</dt>
        <dd>{new Date(call.ts).toLocaleString([], { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" })}</dd>
        <dt>Requested</dt>
        <dd class="mono">{call.requestedModel ? <Breakable name={call.requestedModel} /> : "–"}</dd>
        <dt>{served(call) ? "Served by" : "Last target"}</dt>
        <dd class="mono">{call.providerId ? <Breakable name={`${call.providerId}/${call.model}`} /> : "–"}</dd>
        <dt>Account</dt>
        <dd>{call.accountId ?? "–"}</dd>
        <dt>Key</dt>
        <dd>{call.keyName ?? "–"}</dd>
        <dt>Client format</dt>
        <dd>{call.clientFormat}</dd>
        <dt>Transport</dt>
        <dd class="call-transport" data-transport={call.transport ?? "unknown"}>
          {transportText(call.transport)}
        </dd>
        {call.instance && (
          <>
            <dt>Instance</dt>
            <dd class="call-instance" title={call.instanceId ? `instance id ${call.instanceId}` : undefined}>
              <Breakable name={call.instance} />
            </dd>
          </>
        )}
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
          {count(call.usage.inputTokens)} in (uncached) · {count(call.usage.outputTokens)} out
          {call.usage.cacheReadTokens ? ` · ${count(call.usage.cacheReadTokens)} cache read` : ""}
          {call.usage.cacheWriteTokens ? ` · ${count(call.usage.cacheWriteTokens)} cache write` : ""}
          {call.estimated && call.outcome !== "rejected" ? " (estimated)" : ""}
        </dd>
        <SearchesRow u={call.usage} />
        <dt>Cost</dt>
        <dd>
          <CostText call={call} />
        </dd>
      </dl>
      <ErrorLine error={trace.error} />
      {t?.error && (
        <div class="answered-error" data-error-status={t.error.status}>
          <h3>{call.outcome === "rejected" ? "Refused: what the client was told" : "The error the client got"}</h3>
          <div class="answered-error-head">
            <span class="mono">{answeredErrorHead(t.error)}</span>
            {t.error.param && <span class="muted"> · field <code>{t.error.param}</code></span>}
          </div>
          <p class="answered-error-message">{t.error.message}</p>
        </div>
      )}
      {t && !t.error && cutAfterCommit(call.outcome, call.status) && <CutReply status={call.status} trace={t} />}
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
          {t.attempts.length === 0 && <p class="muted">No upstream attempt{call.outcome === "ok" ? " (answered locally)" : call.outcome === "rejected" ? " (refused before routing)" : ""}.</p>}
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
              {a.refresh && (
                <div class="small attempt-refresh" data-refresh={a.refresh.ok ? "ok" : "failed"}>
                  {refreshLines(a.refresh).map((l, j) => (
                    <div key={j} class={j > 0 ? "muted" : undefined}>
                      {l}
                    </div>
                  ))}
                </div>
              )}
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
          {t.tokenSaver && <p class="small token-saver">{tokenSaverSentence(t.tokenSaver)}</p>}
        </div>
      )}
      {recorded && (rec || recError) && (
        <div class="recording">
          <h3>Flight recorder</h3>
          <ErrorLine error={recError} />
          {rec && (
            <div class="side-by-side">
              <BodyView title={`Client request (${rec.clientFormat})`} body={rec.client} />
              <BodyView
                title={rec.response?.frames ? `Sent to the client over the WebSocket (${rec.response.frames.length} frames)` : `Sent to the client${rec.response ? ` (${rec.response.status})` : ""}`}
                body={rec.response}
                note={
                  rec.response?.frames
                    ? "The reply went over Codex's Responses WebSocket as response.* JSON text frames, one per event (no SSE event:/data: lines); one frame a line."
                    : rec.transport === "websocket"
                      ? `Refused before any event: the WebSocket sent this answer as one {"type":"error","status":${rec.response?.status ?? "…"},"error":…} frame.`
                      : undefined
                }
              />
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

/**
 * A call's tokens in the list: `100 / 20`, or with prompt-cache tokens `100 +5,000 cache read +300
 * cache write / 20`, in the words of the call view and the Usage table (newuser14 K13: the cell read
 * "100 / 20" for a call that read 5,000 tokens from the cache, most of its cost; then "+5,300 cache"
 * added the reads, billed at a tenth of input, to the writes, billed above it). Input is the uncached
 * part (the hub's convention, formats/hub.ts). Each part stays whole and the cell wraps between parts
 * when the table is narrow (a `.tokens-part` inline block), so a part never splits. Figures the
 * gateway estimated because the provider reported no usage (a reply cut off before it, O-1) start with
 * "≈" and say so in the cell's title (try17 T7: they read as the provider's own).
 */
function TokensInOut({ u, estimated }: { u: CallRow["usage"]; estimated: boolean }) {
  const read = u.cacheReadTokens ?? 0;
  const write = u.cacheWriteTokens ?? 0;
  const parts = `${count(u.inputTokens)} uncached input, ${count(read)} cache read, ${count(write)} cache write, ${count(u.outputTokens)} output tokens`;
  const title = estimated ? `Estimated by the gateway from the text (the provider reported no usage for this reply): ${parts}` : read + write > 0 ? parts : undefined;
  return (
    <span title={title} data-estimated={estimated ? "" : undefined}>
      {estimated && <span class="estimated-mark" aria-label="estimated">≈</span>}
      {count(u.inputTokens)}
      {read > 0 && (
        <>
          {" "}
          <span class="muted tokens-part">+{count(read)} cache read</span>
        </>
      )}
      {write > 0 && (
        <>
          {" "}
          <span class="muted tokens-part">+{count(write)} cache write</span>
        </>
      )}{" "}
      <span class="tokens-part">/ {count(u.outputTokens)}</span>
    </span>
  );
}

/** How many calls one page lists. */
const PAGE_SIZE = 200;

type Filters = { model: string; account: string; key: string; outcome: string; transport: string; instance: string };

/**
 * Where the list is: the newest calls (`page` 1, live), or a page before / after a cursor of the admin
 * API (`GET /calls?before=…|after=…`). `page` counts pages from the newest as the user moved; unknown
 * (undefined) for an address typed or kept without it.
 */
interface Position {
  before?: string;
  after?: string;
  page?: number;
}

/** `GET /calls`: a page of calls and the cursors of its neighbours. */
interface CallsAnswer {
  calls: CallRow[];
  older?: string;
  newer?: string;
}

/** Filters, position and selected call as the address keeps them (`/dashboard/calls?model=…&before=…&page=2&id=…`). */
function readUrl(): { filters: Filters; pos: Position } {
  const p = new URLSearchParams(location.search);
  const filters = { model: p.get("model") ?? "", account: p.get("account") ?? "", key: p.get("key") ?? "", outcome: p.get("outcome") ?? "", transport: p.get("transport") ?? "", instance: p.get("instance") ?? "" };
  const before = p.get("before") || undefined;
  const after = before ? undefined : p.get("after") || undefined;
  const page = Math.floor(Number(p.get("page")));
  if (!before && !after) return { filters, pos: { page: 1 } };
  return { filters, pos: { before, after, page: page >= 2 ? page : undefined } };
}

function writeUrl(filters: Filters, pos: Position, selected: string | undefined): void {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) p.set(k, v);
  if (pos.before) p.set("before", pos.before);
  if (pos.after) p.set("after", pos.after);
  if ((pos.before || pos.after) && pos.page) p.set("page", String(pos.page));
  if (selected) p.set("id", selected);
  const q = p.toString();
  const url = `/dashboard/calls${q ? `?${q}` : ""}`;
  if (url !== location.pathname + location.search) history.replaceState(null, "", url);
}

/** "12:01:03", with the date when not today. */
function when(ms: number): string {
  const d = new Date(ms);
  return d.toDateString() === new Date().toDateString() ? clockSeconds(ms) : `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${clockSeconds(ms)}`;
}

/**
 * A row's time, with its date above it when the call is not from today (a call from yesterday read like
 * today's). The date stands on a line of its own, no wider than the time under it ("Dec 3" over
 * "07:40:12 PM"), so the Time column is as wide as without it and the model columns keep their room.
 */
function CallTime({ ts }: { ts: number }) {
  const date = dateIfNotToday(ts);
  return (
    <>
      {date && <span class="call-date">{date}</span>}
      {clockSeconds(ts)}
    </>
  );
}

/** Newer / older buttons and where the list is. */
function Pager({ pos, answer, rows, filtered, go }: { pos: Position; answer?: CallsAnswer; rows: CallRow[]; filtered: boolean; go: (to: "newer" | "older" | "newest") => void }) {
  const newest = !pos.before && !pos.after;
  const matching = filtered ? " matching these filters" : "";
  const span = rows.length > 0 ? `, ${when(rows[rows.length - 1].ts)} – ${when(rows[0].ts)}` : "";
  const where = newest
    ? `Newest ${count(rows.length)} call${rows.length === 1 ? "" : "s"}${matching}${span}; new ones appear as they finish`
    : `${pos.page ? `Page ${pos.page}: ` : "Older calls: "}${count(rows.length)} call${rows.length === 1 ? "" : "s"}${matching}${span}; not live (new calls appear on the newest page)`;
  return (
    <div class="pager">
      <button type="button" class="btn btn-small" data-go="newest" disabled={newest} onClick={() => go("newest")} title="The newest calls, updated live">
        Newest
      </button>
      <button type="button" class="btn btn-small" data-go="newer" disabled={newest || !answer?.newer} onClick={() => go("newer")}>
        ← Newer
      </button>
      <span class="pager-where muted small">{where}</span>
      <button type="button" class="btn btn-small" data-go="older" disabled={!answer?.older} onClick={() => go("older")}>
        Older →
      </button>
    </div>
  );
}

export function CallsPage() {
  const [init] = useState(readUrl);
  const [filters, setFilters] = useState<Filters>(init.filters);
  const [pos, setPos] = useState<Position>(init.pos);
  const [selected, setSelected] = useState<string | undefined>(selectedFromUrl());
  const recorder = useData(() => api<RecorderSettings>("/settings"));
  const [onSince, setOnSince] = useState<number | undefined>();
  const query = qs({ limit: PAGE_SIZE, ...filters, before: pos.before, after: pos.after });
  // Each answer carries the query it answers, so a stale one is never read as the current page's.
  const calls = useData(() => api<CallsAnswer>(`/calls${query}`).then((a) => ({ ...a, query })), [query]);
  const answer = calls.data?.query === query ? calls.data : undefined;
  const newest = !pos.before && !pos.after;
  const seen = useRef<Set<string> | undefined>(undefined);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const refresh = useDebounced(calls.reload, 250);
  useLive((e) => {
    // Only the newest page follows new calls; an older page stays where the user put it.
    if (newest && (e.type === "request_finished" || e.type === "hello")) refresh();
  });
  useEffect(() => writeUrl(filters, pos, selected), [filters, pos, selected]);
  // The address changed under the page (the Calls link of the navigation, back / forward): follow it.
  const [formKey, setFormKey] = useState(0);
  useEffect(() => {
    const on = () => {
      if (!location.pathname.startsWith("/dashboard/calls")) return;
      const u = readUrl();
      setFilters(u.filters);
      setPos(u.pos);
      setSelected(selectedFromUrl());
      setFormKey((k) => k + 1);
    };
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  useEffect(() => {
    // A newer page that reached the newest calls is the newest page itself (full, and live).
    if (pos.after && answer && !answer.newer) setPos({ page: 1 });
  }, [answer, pos.after]);
  useEffect(() => {
    const rows = answer?.calls;
    if (!rows) return;
    // Rows are "fresh" only when they arrived live on the newest page, not when the user paged.
    if (seen.current && newest) setFresh(new Set(rows.map((r) => r.requestId).filter((id) => !seen.current!.has(id))));
    else setFresh(new Set());
    seen.current = new Set(rows.map((r) => r.requestId));
  }, [answer]);
  const select = (c: CallRow) => setSelected(callIdOf(c));
  const go = (to: "newer" | "older" | "newest") => {
    if (to === "newest" || !answer) return setPos({ page: 1 });
    if (to === "older" && answer.older) setPos({ before: answer.older, page: pos.page ? pos.page + 1 : undefined });
    if (to === "newer" && answer.newer) setPos(pos.page === 2 ? { page: 1 } : { after: answer.newer, page: pos.page ? pos.page - 1 : undefined });
    document.querySelector(".content")?.scrollTo?.({ top: 0 });
    scrollTo({ top: 0 });
  };
  // The filters go to the API and are applied here as well (exact match; the model filter matches the
  // requested name or the provider/model that served; the account filter the account that served or one
  // that answered an attempt with 429), so the list is right whatever the API filters.
  const rows = (answer?.calls ?? []).filter(
    (c) =>
      (!filters.model || c.requestedModel === filters.model || `${c.providerId}/${c.model}` === filters.model) &&
      (!filters.account || c.accountId === filters.account || (c.rateLimited?.includes(filters.account) ?? false)) &&
      (!filters.key || c.keyName === filters.key) &&
      (!filters.outcome || c.outcome === filters.outcome) &&
      (!filters.transport || (c.transport ?? "unknown") === filters.transport) &&
      (!filters.instance || c.instance === filters.instance),
  );
  // One number of decimals down the Cost column, two significant digits of its smallest cost ($0.025 is not "$0.03").
  const costCell = usdColumn(columnCosts(rows));
  // Several instances on one store (newuser12a G11): which one served each call is a column, and a filter.
  const instances = new Set((answer?.calls ?? []).map((c) => c.instance ?? ""));
  const byInstance = instances.size > 1 || filters.instance !== "";
  // An id in the address opens that call, listed here or not (try18 D6: `GET /calls?id=` finds it at any age).
  const listed = rows.find((c) => isCall(c, selected));
  const lookup = useCallById(selected, answer !== undefined && !listed);
  const current = listed ?? lookup.call;
  const known = useKnownNames(answer?.calls ?? []);
  const close = () => {
    if (current) focusRowOf(current);
    setSelected(undefined);
  };
  useTraceFocus(current && callIdOf(current), close);
  // A changed filter starts again from the newest calls.
  const set = (k: keyof Filters) => (e: Event) => {
    setFilters({ ...filters, [k]: (e.target as HTMLInputElement).value.trim() });
    setPos({ page: 1 });
  };
  const filtered = Object.values(filters).some((v) => v !== "");
  const pager = (answer?.older || !newest) && <Pager pos={pos} answer={answer} rows={rows} filtered={filtered} go={go} />;
  const trace = current && (
    <TraceView
      // Keyed by the call: another call's trace view starts empty until its own trace is read, never
      // showing the previous call's attempts and error under this call's id.
      key={callIdOf(current)}
      call={current}
      recorder={recorder.data}
      onSince={onSince}
      onClose={close}
      recorderChanged={() => {
        setOnSince(Date.now());
        recorder.reload();
      }}
    />
  );
  return (
    <div class="page page-wide">
      <header class="page-head">
        <div>
          <h1>Calls</h1>
          <p class="muted">Requests, newest first, {PAGE_SIZE} a page; new ones appear as they finish.</p>
        </div>
        <CallIdSearch key={`id-${formKey}`} value={selected} open={setSelected} />
        <form key={formKey} class="form-row filters" onSubmit={(e) => e.preventDefault()}>
          <FilterLists known={known} />
          <div class="field">
            <label for="f-model">Model</label>
            <input id="f-model" name="model" list="calls-models" placeholder="any" defaultValue={filters.model} onChange={set("model")} onInput={onPick(set("model"))} />
          </div>
          <div class="field">
            <label for="f-account">Account</label>
            <input id="f-account" name="account" list="calls-accounts" placeholder="any" defaultValue={filters.account} onChange={set("account")} onInput={onPick(set("account"))} />
          </div>
          <div class="field">
            <label for="f-key">Key</label>
            <input id="f-key" name="key" list="calls-keys" placeholder="any" defaultValue={filters.key} onChange={set("key")} onInput={onPick(set("key"))} />
          </div>
          <div class="field">
            <label for="f-outcome">Outcome</label>
            <select id="f-outcome" name="outcome" value={filters.outcome} onChange={set("outcome")}>
              {OUTCOMES.map((o) => (
                <option key={o} value={o}>
                  {o || "any"}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="f-transport">Transport</label>
            <select id="f-transport" name="transport" value={filters.transport} onChange={set("transport")}>
              {TRANSPORTS.map((o) => (
                <option key={o} value={o}>
                  {o || "any"}
                </option>
              ))}
            </select>
          </div>
          {byInstance && (
            <div class="field">
              <label for="f-instance">Instance</label>
              <input id="f-instance" name="instance" placeholder="any" defaultValue={filters.instance} onChange={set("instance")} />
            </div>
          )}
        </form>
      </header>
      <ErrorLine error={calls.error} />
      <ErrorLine error={lookup.error} />
      {selected && lookup.missing && <NoSuchCall id={selected} settings={recorder.data?.settings} />}
      {answer && rows.length === 0 && !filtered && newest && (
        <Card>
          <Empty title="No traffic yet">
            <p>Point a coding agent at this gateway; its requests show up here as they finish.</p>
          </Empty>
          <SetupSnippets compact />
        </Card>
      )}
      {answer && rows.length === 0 && (filtered || !newest) && (
        <>
          <p class="muted">{filtered ? "No call matches these filters" : "No calls"}{newest ? "." : " on this page."}</p>
          {filtered && newest && <EmptyFilterNote filters={filters} known={known} />}
          {pager}
          {trace}
        </>
      )}
      {rows.length > 0 && (
        <div class={current ? "split" : ""}>
          <Card>
            {pager}
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
                    {byInstance && <th data-opt="1">Instance</th>}
                    <th data-opt="1" class="num" title="Input not read from or written to the provider's prompt cache, then (+) the tokens read from it and those written to it, / output tokens">
                      Tokens in/out
                    </th>
                    <th data-opt="1" class="num">Cost</th>
                    <th class="num">Total</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((c) => {
                    const id = callIdOf(c);
                    const open = isCall(c, selected);
                    return (
                      <tr key={c.requestId} data-route-id={id} class={`clickable ${open ? "selected" : ""} ${fresh.has(c.requestId) ? "fresh" : ""}`} onClick={() => select(c)}>
                        <td class="nowrap call-time">
                          {/* the row's keyboard door (try18 D7): its click (Enter, Space) reaches the row's onClick */}
                          <button type="button" class="call-open" aria-current={open ? "true" : undefined} aria-label={`Open the trace of the call at ${when(c.ts)}${c.requestedModel ? ` for ${c.requestedModel}` : ""}, ${c.outcome}`}>
                            <CallTime ts={c.ts} />
                          </button>
                        </td>
                        <td class="mono">
                          {c.requestedModel ? <Breakable name={c.requestedModel} /> : "–"}
                          <TransportBadge transport={c.transport} />
                          {c.fallback && current && (
                            <>
                              {" "}
                              <Pill tone="warn">fallback</Pill>
                            </>
                          )}
                        </td>
                        <td class="mono" data-opt="1">
                          {c.providerId && served(c) ? <Breakable name={`${c.providerId}/${c.model}`} /> : "–"}
                          {c.fallback && (
                            <>
                              {" "}
                              <Pill tone="warn">fallback</Pill>
                            </>
                          )}
                        </td>
                        <td data-opt="1">
                          {c.accountId ?? "–"}
                          {filters.account && c.accountId !== filters.account && c.rateLimited?.includes(filters.account) && (
                            <span class="muted limited-by"> · {filters.account} answered 429</span>
                          )}
                        </td>
                        <td data-opt="1">{c.keyName ?? "–"}</td>
                        <td>
                          <OutcomePill outcome={c.outcome} status={c.status} />
                        </td>
                        {byInstance && (
                          <td data-opt="1" class="call-instance">
                            {c.instance ? <Breakable name={c.instance} /> : "–"}
                          </td>
                        )}
                        <td class="num" data-opt="1" data-tokens="">
                          <TokensInOut u={c.usage} estimated={c.estimated && c.outcome !== "rejected"} />
                          <SearchesPart u={c.usage} />
                        </td>
                        <td class="num" data-opt="1">
                          <CostCell call={c} money={costCell} />
                        </td>
                        <td class="num">{ms(c.totalMs)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            {pager}
          </Card>
          {trace}
        </div>
      )}
    </div>
  );
}
