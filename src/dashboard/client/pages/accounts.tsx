/**
 * Accounts (SPEC 9.4): every account with its state per model — cooling down with a live countdown and
 * the reason, locked, quarantined, disabled, circuit open — its quota windows as bars with reset times,
 * burn rate and projected exhaustion (../../burn.ts), and enable / disable / test; an account stored in the
 * database (`switchyard login` / `import`) can also be removed, confirmed first (../confirm-action.tsx). A
 * removed account/model pairing (SPEC 6.3) is listed with when it is tried again and Restore; a locked
 * account says how it comes back (its key replaced and the config reloaded, a new login) and has Unlock
 * (`POST /admin/api/accounts/{id}/unlock`, as `switchyard accounts unlock ID`); an open or half-open
 * provider circuit has Close circuit (`POST /admin/api/providers/{id}/close-circuit`). The
 * implicit keyless account of a `*-compatible` provider without accounts is listed too, marked as such,
 * with Test only (nothing to disable or remove: the provider's config entry decides it). Test names the
 * model it used and where it came from (the model the account last served, when nothing configured names
 * one); when the server knows none for the provider (400 `model_required`), the card offers the models the
 * account's upstream lists (the 400's `models`) to pick from, else says why that list could not be read and
 * asks for one. A provider configured without an account, of a kind that needs one, is listed first with
 * the 503 its requests get and how to add an account.
 */
import { useEffect, useState } from "preact/hooks";
import type { AccountsStatus, AccountStatus } from "../types.ts";
import { estimateBurn, usedShare, windowLengthMs, type UsageSample } from "../../burn.ts";
import { api, ApiError } from "../api.ts";
import { ActionButton, Card, Countdown, Empty, ErrorLine, Pill, Snippet, useData, useDebounced, useNow } from "../components.tsx";
import { clock, ms, pct, span, withoutIsoTime } from "../format.ts";
import { accountCounts } from "../account-counts.ts";
import { ConfirmAction } from "../confirm-action.tsx";
import { loginFacts } from "../login-facts.ts";
import { useLive } from "../live.ts";

type QuotaRow = AccountStatus["quota"][number];

/** Readings of each quota window seen while the page is open (for the observed burn rate). */
const readings = new Map<string, UsageSample[]>();

function remember(status: AccountsStatus) {
  for (const a of status.accounts) {
    for (const w of a.quota) {
      const used = usedShare(w);
      if (used === undefined) continue;
      const k = `${a.id}|${w.window}|${w.model}`;
      const list = readings.get(k) ?? [];
      const at = w.updatedAt ?? status.now;
      if (list.length === 0 || list[list.length - 1].at !== at) list.push({ at, used });
      if (list.length > 500) list.shift();
      readings.set(k, list);
    }
  }
}

/** The state labels of an account as a whole. */
function accountPills(a: AccountStatus, now: number) {
  const pills = [];
  if (a.disabled) pills.push(<Pill tone="off">Disabled</Pill>);
  if (a.reasons.some((r) => r.startsWith("credential quarantined"))) pills.push(<Pill tone="bad" title="The provider rejected this credential; log in again or import a new one">Quarantined</Pill>);
  if (a.lock)
    pills.push(
      <Pill tone="bad" title={a.lock.reason}>
        Locked: {a.lock.reason}
        {a.lock.until ? <Countdown until={a.lock.until} prefix=" · " /> : " · until changed"}
      </Pill>,
    );
  const whole = a.cooldowns.find((c) => c.model === "*" && c.until > now);
  if (whole)
    pills.push(
      <Pill tone="warn" title={`level ${whole.level}`}>
        Cooling down ({whole.reason}) <Countdown until={whole.until} prefix="· " />
      </Pill>,
    );
  if (a.circuit.state !== "closed")
    pills.push(
      <Pill tone={a.circuit.state === "open" ? "bad" : "warn"} title={`${a.circuit.consecutive5xx} consecutive 5xx from ${a.providerId}`}>
        Circuit {a.circuit.state}
        {a.circuit.openUntil && a.circuit.openUntil > now ? <Countdown until={a.circuit.openUntil} prefix=" · " /> : null}
      </Pill>,
    );
  // A cooldown for one model (SPEC 6.2 loop 2: a 429, a 5xx, a broken stream) leaves the account's other models eligible: named here, each in the models table below.
  const modelCooling = a.cooldowns.filter((c) => c.model !== "*" && c.until > now);
  if (modelCooling.length > 0)
    pills.push(
      <Pill tone="warn" title={modelCooling.map((c) => `${c.model}: ${c.reason}`).join("\n")}>
        {modelCooling.length === 1 ? `${modelCooling[0]!.model} cooling down` : `${modelCooling.length} models cooling down`}
      </Pill>,
    );
  if (pills.length === 0) pills.push(<Pill tone="ok">Ready</Pill>);
  return pills;
}

function QuotaBar({ accountId, w, now }: { accountId: string; w: QuotaRow; now: number }) {
  const used = usedShare(w);
  const burn = used === undefined ? undefined : estimateBurn({ now, used, resetAt: w.resetAt, windowMs: windowLengthMs(w.window), samples: readings.get(`${accountId}|${w.window}|${w.model}`) });
  const tone = used === undefined ? "" : used >= 0.9 ? "bad" : used >= 0.7 ? "warn" : "ok";
  const label = `${w.window}${w.model !== "*" ? ` · ${w.model}` : ""}`;
  return (
    <div class="quota" data-window={w.window}>
      <div class="quota-head">
        <span class="quota-name">{label}</span>
        <span class="quota-used">
          {used !== undefined ? `${pct(used)} used` : w.remaining !== undefined ? `${w.remaining.toLocaleString()} left` : "–"}
          {w.remaining !== undefined && w.limit !== undefined ? ` (${w.remaining.toLocaleString()} of ${w.limit.toLocaleString()} left)` : ""}
        </span>
      </div>
      <div class="bar">
        <div class={`bar-fill bar-${tone}`} style={{ width: `${Math.max(used ?? 0, 0.005) * 100}%` }} />
      </div>
      <div class="quota-foot">
        <span>{w.resetAt ? <>resets in {span(w.resetAt - now)} ({clock(w.resetAt)})</> : "reset time not reported"}</span>
        <span class="burn">
          {burn?.verdict === "runs_out" && burn.exhaustAt !== undefined && (
            <span class="burn-bad" title={`basis: ${burn.basis === "observed" ? "readings while this page was open" : "average since the window started"}`}>
              {pct(burn.ratePerHour)}/h · runs out in {span(burn.exhaustAt - now)} ({clock(burn.exhaustAt)})
            </span>
          )}
          {burn?.verdict === "lasts" && (
            <span title={`basis: ${burn.basis === "observed" ? "readings while this page was open" : "average since the window started"}`}>{pct(burn.ratePerHour)}/h · lasts until reset</span>
          )}
          {burn?.verdict === "idle" && <span>not burning</span>}
          {burn?.verdict === "exhausted" && <span class="burn-bad">exhausted</span>}
          {burn?.verdict === "unknown" && <span class="muted">burn rate: not enough readings yet</span>}
        </span>
      </div>
    </div>
  );
}

/**
 * What the cards' Success and Latency cover, as `GET /accounts` computes them (src/accounts/stats.ts):
 * this instance's requests with each account since it started (kept in its memory): Success the share
 * of the attempts that succeeded, recent ones weighing most, with its count under it. Said once, over the cards (every card's line was the same); `halfLifeMs` is the
 * server's (the same for every account). Before an account's first request its rate is a starting
 * value, not a measure: its card reads "–" and says that it has had no request.
 */
function healthPeriod(halfLifeMs: number): string {
  const min = (ms: number) => `${Math.round(ms / 60_000)} min`;
  return `Success and Latency: this instance's requests with each account since it started. Success is the share of its attempts that succeeded (the count under it), recent ones weighing most (an attempt counts half after ${min(halfLifeMs)}, a quarter after ${min(2 * halfLifeMs)}; the share does not change while the account is idle); Latency is to the first byte.`;
}

/** "0 of 2 attempts": an account's attempts that succeeded, of those counted in its Success. */
function attemptsOf(h: { succeeded: number; failed: number }): string {
  const n = h.succeeded + h.failed;
  return `${h.succeeded} of ${n} attempt${n === 1 ? "" : "s"}`;
}

/** " with gpt-demo (from combo demo)": the model a test asked for and where it came from. */
const testedWith = (t: { model?: string; model_from?: string }) => (t.model ? ` with ${t.model}${t.model_from && t.model_from !== "the request" ? ` (from ${t.model_from})` : ""}` : "");

function AccountCard({ a, now, reload }: { a: AccountStatus; now: number; reload: () => void }) {
  const [test, setTest] = useState<
    { ok: boolean; status: number; latency_ms: number; model?: string; model_from?: string; error?: string; lock?: { reason: string; note: string } } | { failed: string } | undefined
  >();
  /**
   * Set when the server knows no model to test with: the models the account's upstream lists (offered
   * to pick from), or why that list could not be read (the operator names one).
   */
  const [askModel, setAskModel] = useState<{ models: string[]; error?: string } | undefined>();
  const [testModel, setTestModel] = useState("");
  const [error, setError] = useState<string | undefined>();
  const toggle = async () => {
    setError(undefined);
    try {
      await api(`/accounts/${encodeURIComponent(a.id)}/${a.disabled ? "enable" : "disable"}`, { method: "POST" });
      reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const unlock = async () => {
    setError(undefined);
    try {
      await api(`/accounts/${encodeURIComponent(a.id)}/unlock`, { method: "POST" });
      setTest(undefined); // its note about the lock no longer holds
      reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  // newuser12a G21: an open circuit half-opened only after its 5 minutes; closed here by hand.
  const closeCircuit = async () => {
    setError(undefined);
    try {
      await api(`/providers/${encodeURIComponent(a.providerId)}/close-circuit`, { method: "POST" });
      reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const remove = async () => {
    setError(undefined);
    await api(`/accounts/${encodeURIComponent(a.id)}`, { method: "DELETE" });
    reload();
    return `Account ${a.id} removed.`;
  };
  const runTest = async (model?: string) => {
    setTest(undefined);
    try {
      setTest(await api(`/accounts/${encodeURIComponent(a.id)}/test`, { method: "POST", body: model ? { model } : {} }));
    } catch (e) {
      // No model known for the provider: ask for one instead of showing the API's instruction.
      if (e instanceof ApiError && e.status === 400 && e.param === "model" && model === undefined) {
        const offered = Array.isArray(e.detail.models) ? e.detail.models.filter((m): m is string => typeof m === "string") : [];
        setTestModel(offered[0] ?? "");
        return setAskModel({ models: offered, error: typeof e.detail.models_error === "string" ? e.detail.models_error : undefined });
      }
      setTest({ failed: (e as Error).message });
    }
  };
  const models = a.models.filter((m) => m.model !== "*");
  const implicit = a.source === "implicit";
  return (
    <Card
      row
      class={`account ${a.eligible ? "" : "account-held"} ${implicit ? "account-implicit" : ""}`}
      title={
        <span class="account-title" data-account={a.id}>
          {a.id}
          <span class="tag">{a.providerId}</span>
          {a.providerKind && a.providerKind !== a.providerId && <span class="tag tag-soft">{a.providerKind}</span>}
          {implicit && (
            <span class="tag tag-implicit" title="Not configured: the provider has no account, so its requests go out with this one, without a key">
              implicit · keyless
            </span>
          )}
        </span>
      }
      actions={
        <>
          <ActionButton small onClick={() => runTest(askModel && testModel.trim() ? testModel.trim() : undefined)} title="One minimal upstream call with this account (writes no cooldown)">
            Test
          </ActionButton>
          {a.lock && (
            <ActionButton small tone="primary" onClick={unlock} title={`Clear the lock (${a.lock.reason}) now, as switchyard accounts unlock ${a.id}: requests use the account again`}>
              Unlock
            </ActionButton>
          )}
          {a.circuit.state !== "closed" && (
            <ActionButton small tone="primary" onClick={closeCircuit} title={`Close the circuit of ${a.providerId} now, as switchyard accounts close-circuit ${a.providerId}: requests go to the provider again (every account of it)`}>
              Close circuit
            </ActionButton>
          )}
          {!implicit && (
            <ActionButton small tone={a.disabled ? "primary" : "danger"} onClick={toggle}>
              {a.disabled ? "Enable" : "Disable"}
            </ActionButton>
          )}
          {a.source === "db" && (
            <ConfirmAction label="Remove" confirmLabel="Confirm remove" danger title="Delete this stored account and its state (cooldowns, locks, bindings)" run={remove} />
          )}
        </>
      }
    >
      <div class="pills">{accountPills(a, now)}</div>
      {a.lock && <p class="small lock-advice">To bring it back: {a.lock.advice} (or Unlock here).</p>}
      {a.quarantine && (
        <p class="small lock-advice quarantine-advice">
          The provider rejected this credential ({a.quarantine.reason}). To bring it back: {a.quarantine.advice}.
        </p>
      )}
      {implicit && (
        <p class="muted small implicit-note">
          Provider <code>{a.providerId}</code> has no account in the config, so its requests are sent without a key through this implicit account. Nothing to change here: give the provider an account (or remove it) in the config file.
        </p>
      )}
      <ErrorLine error={error} />
      {askModel && (
        <form
          class="form-row test-model"
          onSubmit={(e) => {
            e.preventDefault();
            if (testModel.trim()) void runTest(testModel.trim());
          }}
        >
          {askModel.models.length > 0 ? (
            <>
              <p class="small">
                Nothing in the configuration names a model of provider <code>{a.providerId}</code> and this account served none lately; its upstream lists {askModel.models.length === 1 ? "this model" : `these ${askModel.models.length} models`}: pick the one to test this account with.
              </p>
              <div class="field">
                <label for={`test-model-${a.id}`}>Model</label>
                <select id={`test-model-${a.id}`} name="model" value={testModel} onChange={(e) => setTestModel((e.target as HTMLSelectElement).value)}>
                  {askModel.models.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </div>
            </>
          ) : (
            <>
              <p class="small">
                Nothing in the configuration names a model of provider <code>{a.providerId}</code>, this account served none lately, and its upstream's model list could not be read ({askModel.error ?? "no answer"}): name the upstream model to test this account with.
              </p>
              <div class="field">
                <label for={`test-model-${a.id}`}>Model</label>
                <input id={`test-model-${a.id}`} name="model" value={testModel} onInput={(e) => setTestModel((e.target as HTMLInputElement).value)} placeholder="upstream model id" autoComplete="off" spellcheck={false} required />
              </div>
            </>
          )}
          <button class="btn btn-primary" type="submit" disabled={testModel.trim() === ""}>
            Test with this model
          </button>
        </form>
      )}
      {test && (
        <p class={`test-result ${"failed" in test || !test.ok ? "test-bad" : "test-ok"}`}>
          {"failed" in test
            ? `Test failed: ${test.failed}`
            : test.ok
              ? `Test passed: ${test.status} in ${ms(test.latency_ms)}${testedWith(test)}`
              : `Test failed: ${test.status || "no answer"}${test.error ? ` · ${test.error}` : ""} after ${ms(test.latency_ms)}${testedWith(test)}`}
        </p>
      )}
      {test && "lock" in test && test.lock && <p class="test-result test-bad test-lock">{test.lock.note}</p>}
      <dl class="facts">
        <div>
          <dt>Credential</dt>
          <dd class="wraps">{a.credential === "api_key" ? "API key" : a.credential === "oauth" ? "subscription (OAuth)" : "none"}</dd>
        </div>
        {a.login &&
          loginFacts(a.login, now).map((f) => (
            <div key={f.label} data-login-fact={f.label.toLowerCase()}>
              <dt>{f.label}</dt>
              <dd class="wraps" title={f.title}>
                {f.value}
              </dd>
            </div>
          ))}
        <div>
          <dt>Source</dt>
          <dd>{a.source === "config" ? "config file" : a.source === "implicit" ? "implicit" : "database"}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd>{a.priority}</dd>
        </div>
        <div>
          <dt>Slots</dt>
          <dd>
            {a.slots.inUse}
            {a.slots.limit !== null ? ` / ${a.slots.limit}` : ""} in use{a.slots.waiting ? ` · ${a.slots.waiting} waiting` : ""}
          </dd>
        </div>
        <div>
          <dt>Success</dt>
          <dd class="wraps">
            {a.health.seen ? pct(a.health.successRate) : "–"}
            {a.health.seen && <span class="muted small health-count"> ({attemptsOf(a.health)})</span>}
          </dd>
        </div>
        <div>
          <dt>Latency</dt>
          <dd>{ms(a.health.latencyMs)}</dd>
        </div>
        <div>
          <dt>Bound conversations</dt>
          <dd title="Conversations whose next request goes to this account (session affinity)">{a.bindings}</dd>
        </div>
      </dl>
      {!a.health.seen && <p class="muted small health-none">No request with this account on this instance since it started.</p>}
      {a.quota.length > 0 && (
        <div class="quotas">
          <h3>Quota windows</h3>
          {a.quota.map((w) => (
            <QuotaBar key={`${w.window}|${w.model}`} accountId={a.id} w={w} now={now} />
          ))}
        </div>
      )}
      {models.length > 0 && (
        <table class="models">
          <thead>
            <tr>
              <th>Model</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {models.map((m) => (
              <tr key={m.model} data-model={m.model}>
                <td class="mono nowrap">{m.model}</td>
                <td>
                  {m.eligible ? (
                    <span class="ok-text">eligible</span>
                  ) : (
                    <span class="held-text">
                      {withoutIsoTime(m.reason)}
                      {m.until && m.until > now ? <Countdown until={m.until} prefix={a.removedModels.some((r) => r.model === m.model) ? " · tried again in " : " · "} /> : null}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {a.removedModels.length > 0 && <RemovedModels a={a} reload={reload} />}
    </Card>
  );
}

/**
 * The account's removed pairings (SPEC 6.3: a 404 model not found or a model-scoped 403 removes the
 * model from the account for 24 h), each with when it is tried again and a Restore button that ends the
 * removal now (`POST /admin/api/accounts/{id}/restore` with `{model}`, as `switchyard accounts restore ID
 * MODEL`; the page's CSRF token through {@link api}). The list follows the `model_restored` event, for a
 * restore from here or from anywhere else.
 */
function RemovedModels({ a, reload }: { a: AccountStatus; reload: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const restore = async (model: string) => {
    setError(undefined);
    try {
      await api(`/accounts/${encodeURIComponent(a.id)}/restore`, { method: "POST", body: { model } });
      reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div class="removed-models">
      <h3>Removed models</h3>
      <ul>
        {a.removedModels.map((r) => (
          <li key={r.model} data-removed={r.model}>
            <span class="removed-what">
              <span class="mono">{r.model}</span>
              <span class="muted small">
                {" "}
                {r.reason}
                {r.until ? (
                  <>
                    {" · tried again in "}
                    <Countdown until={r.until} /> ({clock(r.until)})
                  </>
                ) : (
                  " · until restored"
                )}
              </span>
            </span>
            <ActionButton small onClick={() => restore(r.model)} title={`Let ${a.id} serve ${r.model} again now (as switchyard accounts restore ${a.id} ${r.model})`}>
              Restore
            </ActionButton>
          </li>
        ))}
      </ul>
      <ErrorLine error={error} />
    </div>
  );
}

/**
 * How to add accounts: shown as the empty state and under the list. Names the config file this instance
 * runs with (`GET /admin/api/settings`'s `file`: `--config`, scripts/demo's temporary one …), or where a
 * new one goes when it runs on the built-in default.
 */
export function AddAccountHints() {
  const settings = useData(() => api<{ file?: string | null }>("/settings"));
  const file = settings.data?.file;
  return (
    <div class="hints">
      <p>Accounts come from three places:</p>
      <ol>
        <li>
          {file ? (
            <>
              <strong>The config file</strong> this gateway runs with (<code class="config-file">{file}</code>), an API key per account (it is re-read when saved):
            </>
          ) : (
            <>
              <strong>A config file</strong> (<code class="config-file">~/.switchyard/config.yaml</code>, or <code>$SWITCHYARD_HOME/config.yaml</code>; read at the next start), an API key per account:
            </>
          )}
          <Snippet code={"accounts:\n  - id: anthropic-main\n    provider: anthropic\n    api_key: env:ANTHROPIC_API_KEY"} />
          {!file && (
            <>
              With the built-in default config, <code>ANTHROPIC_API_KEY</code>, <code>OPENAI_API_KEY</code> and <code>GEMINI_API_KEY</code> in the gateway's environment become accounts.
            </>
          )}
        </li>
        <li>
          <strong>A subscription login</strong> (Claude Code or ChatGPT/Codex), on the gateway's machine (with <code>--data-dir DIR</code> when it runs with another data directory than <code>~/.switchyard</code>):
          <Snippet code={"switchyard login claude-code\nswitchyard login codex"} />
        </li>
        <li>
          <strong>An import</strong> of the credentials those CLIs already keep (<code>~/.claude/.credentials.json</code>, <code>~/.codex/auth.json</code>):
          <Snippet code={"switchyard import claude-code\nswitchyard import codex"} />
        </li>
      </ol>
    </div>
  );
}

/**
 * A provider without any account, of a kind that needs one (`GET /accounts`'s
 * `providersWithoutAccounts`): every request routed to it is answered 503 `no_account`, and until
 * 2026-12-05 nothing on this page said so (dash16's tryout: a `gemini` provider without a key was not
 * listed at all). Its card says that and shows the message those requests get, with how to add an
 * account; it has no account, so nothing to test, disable or unlock. A built-in provider nobody
 * configured is listed once something sends to it (review17 R5: a Gemini CLI user without
 * GEMINI_API_KEY on the built-in default saw nothing here): its card also says which aliases and combos
 * name it and how many requests this instance refused for it.
 */
function ProviderWithoutAccount({ p }: { p: NonNullable<AccountsStatus["providersWithoutAccounts"]>[number] }) {
  return (
    <Card
      row
      class="account account-held account-missing"
      title={
        <span class="account-title" data-provider-without-account={p.id}>
          {p.id}
          {p.kind !== p.id && <span class="tag tag-soft">{p.kind}</span>}
        </span>
      }
    >
      <div class="pills">
        <Pill tone="bad" title="This provider needs an account (an API key or a login) and has none">
          No account configured
        </Pill>
      </div>
      <p class="small lock-advice no-account-note">
        Requests for <code>{p.id}/…</code>, or an alias or combo that routes to it, fail with 503: {p.error}
        {Object.hasOwn(BARE_NAMES, p.id) && (
          <>
            {" "}A bare model name taken for this provider's (<code>{BARE_NAMES[p.id]}</code>) gets a 404 instead.
          </>
        )}
      </p>
      {p.builtin && <p class="small muted builtin-use">{builtinUse(p.builtin)}</p>}
    </Card>
  );
}

/**
 * The providers a bare model name (no alias or combo, no `provider/` prefix) can be taken for without
 * an account of theirs (SPEC R-2, pipeline/resolve.ts guessProvider: by its name), with such a name; that
 * request is a 404 `model_not_found` (pipeline/gateway.ts), not the 503 of a request naming the provider.
 */
const BARE_NAMES: Record<string, string> = { anthropic: "claude-…", gemini: "gemini-…", openai: "gpt-5" };

/** Why a built-in provider without an account is listed: the routes that name it, the requests refused for it (the CLI's `builtinUse` in other words). */
function builtinUse(b: NonNullable<NonNullable<AccountsStatus["providersWithoutAccounts"]>[number]["builtin"]>): string {
  const named = b.routes.length > 0 ? `A built-in provider, named by ${b.routes.join(", ")}.` : "A built-in provider.";
  if (b.requests === 0) return named;
  const last = b.lastAt === undefined ? "" : `, the last at ${clock(b.lastAt)}${b.lastStatus === 404 ? " (a 404: a bare model name taken for this provider's)" : ""}`;
  return `${named} ${b.requests} ${b.requests === 1 ? "request" : "requests"} refused for want of its account since this instance started${last}.`;
}

export function AccountsPage() {
  const status = useData(() => api<AccountsStatus>("/accounts").then((s) => (remember(s), s)));
  const now = useNow();
  const soon = useDebounced(status.reload, 150);
  const later = useDebounced(status.reload, 1000);
  useLive((e) => {
    if (e.type === "account_state" || e.type === "hello") soon();
    else if (e.type === "request_finished" && e.account) later();
  });
  // The server publishes an end (cooldown_end, unlock, model_restored) on its own timer; a re-read when
  // the first one ends keeps the page right without it (an event missed while the stream reconnected).
  const accounts = status.data?.accounts ?? [];
  const ends = accounts.flatMap((a) => [...a.cooldowns.map((c) => c.until), a.lock?.until ?? Infinity, a.circuit.openUntil ?? Infinity, ...a.models.map((m) => m.until ?? Infinity)]).filter((t) => t > Date.now());
  const next = ends.length ? Math.min(...ends) : Infinity;
  useEffect(() => {
    if (!Number.isFinite(next)) return;
    const t = setTimeout(status.reload, Math.min(next - Date.now() + 300, 2 ** 31 - 1));
    return () => clearTimeout(t);
  }, [next]);

  const missing = status.data?.providersWithoutAccounts ?? [];
  const counts = accountCounts(accounts, now);
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Accounts</h1>
          <p class="muted">
            {status.data ? (
              <>
                {accounts.length} {accounts.length === 1 ? "account" : "accounts"}
                {counts.implicit > 0 && ` (${counts.implicit} implicit, keyless)`} · {counts.ready} ready · {counts.cooling} cooling down · {counts.held} held back · {counts.disabled} disabled · strategy <code>{status.data.strategy}</code>
                {missing.length > 0 && ` · ${missing.length} ${missing.length === 1 ? "provider" : "providers"} without an account`}
              </>
            ) : (
              "Loading…"
            )}
          </p>
          {accounts[0] && <p class="muted small health-note">{healthPeriod(accounts[0].health.halfLifeMs)}</p>}
        </div>
      </header>
      <ErrorLine error={status.error} />
      {status.data && accounts.length === 0 && (
        <Card>
          <Empty title="No accounts yet">
            <p>Requests fail until the gateway has at least one account to send them with.</p>
            <AddAccountHints />
          </Empty>
        </Card>
      )}
      {missing.length > 0 && (
        <div class="accounts providers-without-accounts">
          {missing.map((p) => (
            <ProviderWithoutAccount key={p.id} p={p} />
          ))}
        </div>
      )}
      <div class="accounts">
        {accounts.map((a) => (
          <AccountCard key={a.id} a={a} now={now} reload={status.reload} />
        ))}
      </div>
      {accounts.length > 0 && (
        <details class="card add-hints">
          <summary>Add an account</summary>
          <AddAccountHints />
        </details>
      )}
    </div>
  );
}
