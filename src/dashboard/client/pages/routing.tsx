/**
 * Routing (SPEC 9.4): combos and aliases as configured (file and database), and the dry run — "where
 * would this request go and why" — through `POST /admin/api/dry-run`, the same call and the same
 * answer as `switchyard route`. The lists follow changes made elsewhere (another browser, the admin API,
 * the CLI, a config reload, another instance sharing the store: the `routing_changed` live event); while
 * a combo or alias is being written here, a notice says so instead, and the edit is kept. The config
 * file can be reloaded here, with what the reload answered (../config-reload.tsx).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { ConfirmAction } from "../confirm-action.tsx";
import { comboErrorText } from "../combo-error.ts";
import { ActionButton, Breakable, Card, Countdown, Empty, ErrorLine, Pill, useData, useDebounced } from "../components.tsx";
import { ConfigReloadCard } from "../config-reload.tsx";
import { clockSeconds, withoutIsoTime } from "../format.ts";
import { useLive, type LiveEvent } from "../live.ts";
import type { Alias, Combo, KeyInfo, Provider, RoutePlan } from "../types.ts";

/** The body `switchyard route MODEL` sends when given no --body (src/cli/routing.ts). */
const DEFAULT_REQUEST = '{\n  "messages": [{ "role": "user", "content": "hi" }]\n}';
/** The same request as a Gemini client sends it (the endpoint select swaps an untouched default). */
const DEFAULT_GEMINI_REQUEST = '{\n  "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }]\n}';

function whenText(when: unknown): string {
  if (!when) return "";
  try {
    return JSON.stringify(when);
  } catch {
    return "";
  }
}

/**
 * The actions of a combo or alias stored in the database: Edit opens its form (disabled while that form
 * edits it), Delete is asked twice ({@link ConfirmAction}: Confirm delete or Cancel).
 */
function EditDelete(p: { editing: boolean; edit: () => void; remove: () => Promise<string | undefined> }) {
  return (
    <div class="row-actions">
      <button type="button" class="btn btn-small" onClick={p.edit} disabled={p.editing}>
        Edit
      </button>
      <ConfirmAction label="Delete" confirmLabel="Confirm delete" danger run={p.remove} />
    </div>
  );
}

/** The answer, or undefined when this gateway's admin API has no such route (404). */
function optional<T>(p: Promise<T>): Promise<T | undefined> {
  return p.catch((e) => {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  });
}

/** What changed, in words, for the line under a dry-run answer routed again ("combo fast changed"). */
function changeWhy(e: LiveEvent): string | undefined {
  if (e.type === "routing_changed") return routingChangeText(e) || "routing changed";
  if (e.type === "account_state") return `account ${e.account}${e.model ? ` (${e.model})` : ""}: ${e.change.replaceAll("_", " ")}`;
  if (e.type === "hello") return "the live connection came back";
  return undefined;
}

/**
 * The dry-run form and its answer. The answer follows what it depends on: when routing changes
 * (`routing_changed`: combos, aliases, providers, settings, here or elsewhere), an account's state
 * changes (`account_state`: cooldown, lock, disabled…) or the live connection comes back (something may
 * have been missed), the request that produced it is routed again (not what the form holds now), and a
 * line under it says when and why.
 */
function DryRun({ names }: { names: string[] }) {
  const [model, setModel] = useState("");
  const [format, setFormat] = useState("");
  const [body, setBody] = useState(DEFAULT_REQUEST);
  const [session, setSession] = useState("");
  /** The client key routed as, by name (the dry run's `key`: its tag for key_tag predicates, its allow-list); "" for none. */
  const [keyName, setKeyName] = useState("");
  // Names and tags only: the select never shows a secret or its prefix.
  const keys = useData(() => optional(api<{ keys: KeyInfo[] }>("/keys")).then((r) => (r?.keys ?? []).filter((k) => k.revokedAt === undefined)));
  const [plan, setPlan] = useState<RoutePlan | undefined>();
  const [error, setError] = useState<string | undefined>();
  /** The request the answer on screen is for, when it was routed, and why it was routed again. */
  const [asked, setAsked] = useState<{ payload: Record<string, unknown>; at: number; why?: string } | undefined>();
  const seq = useRef(0);
  const ask = async (payload: Record<string, unknown>, why?: string) => {
    const n = ++seq.current;
    try {
      const answer = await api<RoutePlan>("/dry-run", { method: "POST", body: payload });
      if (n !== seq.current) return;
      setError(undefined);
      setPlan(answer);
      setAsked({ payload, at: Date.now(), why });
    } catch (e) {
      if (n !== seq.current) return;
      setPlan(undefined);
      setAsked(why ? { payload, at: Date.now(), why } : undefined);
      setError(why ? `Routed again after ${why}: ${(e as Error).message}` : (e as Error).message);
    }
  };
  // Changes that may alter the answer: route the same request again (once per burst of events).
  const reasons = useRef<string[]>([]);
  const again = useDebounced(() => {
    const why = [...new Set(reasons.current)].slice(-3).join("; ");
    reasons.current = [];
    if (asked) void ask(asked.payload, why);
  }, 300);
  useLive((e) => {
    const why = asked && changeWhy(e);
    if (!why) return;
    reasons.current.push(why);
    again();
  });
  // The form's own mistakes are said in the form's words, without asking the admin API: its answers
  // spoke of the API's fields ("request.model or model") and Chromium logged each 400 as an error.
  const run = async () => {
    setError(undefined);
    let request: Record<string, unknown>;
    try {
      request = JSON.parse(body || "{}") as Record<string, unknown>;
    } catch (e) {
      setError(`The request body is not JSON (${(e as Error).message}): write it as the client would send it, or leave it empty.`);
      return;
    }
    if (!request || typeof request !== "object" || Array.isArray(request)) {
      setError("The request body must be a JSON object ({ … }), as the client would send it.");
      return;
    }
    if (!model.trim() && (typeof request.model !== "string" || request.model.trim() === "")) {
      setError('Name a model to route: a combo, alias or provider/model in the Model field (or "model" in the request body).');
      return;
    }
    const payload: Record<string, unknown> = { request };
    if (model.trim()) payload.model = model.trim();
    if (format) payload.endpoint = format;
    if (session.trim()) payload.headers = { "x-session-id": session.trim() };
    if (keyName) payload.key = keyName;
    await ask(payload);
  };
  return (
    <Card title="Dry run: where would this request go, and why?">
      <form
        class="dry-run"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <div class="form-row">
          <div class="field grow">
            <label for="dr-model">Model</label>
            <input id="dr-model" name="model" list="dr-models" value={model} onInput={(e) => setModel((e.target as HTMLInputElement).value)} placeholder="a combo, alias or provider/model" />
            <datalist id="dr-models">
              {names.map((n) => (
                <option key={n} value={n} />
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="dr-format">Endpoint</label>
            <select id="dr-format" name="endpoint" value={format} onChange={(e) => {
                const next = (e.target as HTMLSelectElement).value;
                setFormat(next);
                if (next === "gemini" && body === DEFAULT_REQUEST) setBody(DEFAULT_GEMINI_REQUEST);
                if (next !== "gemini" && body === DEFAULT_GEMINI_REQUEST) setBody(DEFAULT_REQUEST);
              }}>
              <option value="">guess from the body</option>
              <option value="chat">/v1/chat/completions</option>
              <option value="responses">/v1/responses</option>
              <option value="messages">/v1/messages</option>
              <option value="gemini">/v1beta/models/…:generateContent</option>
            </select>
          </div>
          <div class="field">
            <label for="dr-session">Session id (affinity)</label>
            <input id="dr-session" name="session" value={session} onInput={(e) => setSession((e.target as HTMLInputElement).value)} placeholder="optional" />
          </div>
          <div class="field">
            <label for="dr-key">Client key</label>
            <select id="dr-key" name="key" value={keyName} onChange={(e) => setKeyName((e.target as HTMLSelectElement).value)}>
              <option value="">none (as from loopback)</option>
              {(keys.data ?? []).map((k) => (
                <option key={`${k.source}:${k.name}`} value={k.name}>
                  {k.name}
                  {k.tag ? ` (tag ${k.tag}` : " (no tag"}
                  {k.disabledAt !== undefined ? ", disabled)" : ")"}
                </option>
              ))}
            </select>
          </div>
          <button class="btn btn-primary" type="submit">
            Route it
          </button>
        </div>
        <div class="field">
          <label for="dr-body">Request body (JSON, as the client would send it; tools and images change the route)</label>
          <textarea id="dr-body" name="body" rows={5} value={body} onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)} />
        </div>
      </form>
      <ErrorLine error={error} />
      {plan && (
        <PlanView plan={plan}>
          {asked && (
            <p class="muted small plan-when" data-plan-at={asked.at}>
              {asked.why
                ? `Routed again at ${clockSeconds(asked.at)} after ${asked.why}. The answer follows routing and account changes while it is on screen.`
                : `Routed at ${clockSeconds(asked.at)}. The answer follows routing and account changes while it is on screen.`}
              {typeof asked.payload.key === "string" ? ` Routed as client key ${asked.payload.key}.` : ""}
            </p>
          )}
          {plan.decisions.some((d) => d.reason.startsWith("weighted draw")) && (
            <p class="muted small" data-note="weighted-draw">
              A weighted combo's order is one random draw: each request draws again, and so does this answer each time it is routed again, so the order on screen may change with no other cause.
            </p>
          )}
        </PlanView>
      )}
    </Card>
  );
}

/**
 * What the fallback budget leaves out of a dry run's attempts (SPEC 6.1; pipeline/attempt-budget.ts
 * `markBudgetReach`), in the words `switchyard route` prints after its attempt order
 * (src/cli/routing.ts `formatRoutePlan`): `"<notReached>: T @ A, …"` for the attempts past
 * `settings.max_attempts` (never made: they are not in the attempt order), then `"<notReachedIf>: T @ A, …"`
 * for those a non-streamed call that never answers would leave out (still in the order). Each line's
 * `mark` names which field it says; none when every attempt is reached.
 */
export function budgetReachLines(attempts: RoutePlan["attempts"]): Array<{ mark: "notReached" | "notReachedIf"; text: string }> {
  const out: Array<{ mark: "notReached" | "notReachedIf"; text: string }> = [];
  for (const mark of ["notReached", "notReachedIf"] as const) {
    const marked = attempts.filter((a) => a[mark]);
    if (marked.length > 0) out.push({ mark, text: `${marked[0]![mark]}: ${marked.map((a) => `${a.target} @ ${a.accountId}`).join(", ")}` });
  }
  return out;
}

/** A dry-run answer; `children` (when and why it was routed) go under its first line. */
function PlanView({ plan, children }: { plan: RoutePlan; children?: ComponentChildren }) {
  const via =
    plan.via === "combo"
      ? `combo ${plan.combo}`
      : plan.via === "alias"
        ? `alias ${plan.alias}${plan.combo ? ` → combo ${plan.combo}` : ""}`
        : plan.via === "guess" && plan.nearName
          ? `guess ("${plan.requestedModel}" is not an alias or combo; did you mean "${plan.nearName}"?)`
          : plan.via;
  return (
    <div class="plan">
      <p>
        <strong class="mono">{plan.requestedModel}</strong> ({plan.clientFormat}) via {via} · account strategy <code>{plan.accountStrategy ?? "?"}</code> · affinity {plan.affinity}
      </p>
      {children}
      <h3>Attempt order</h3>
      {plan.attempts.length === 0 && <p class="held-text">No target has an eligible account: the request would fail.</p>}
      <ol class="attempt-order">
        {plan.attempts
          .filter((a) => !a.notReached)
          .map((a, i) => (
            <li key={i} data-target={a.target} data-account={a.accountId}>
              <span class="plan-order">{i + 1}</span>
              <span class="mono">{a.target}</span> <span class="muted">on</span> <span class="mono">{a.accountId}</span>
            </li>
          ))}
      </ol>
      {budgetReachLines(plan.attempts).map((l) => (
        <p key={l.mark} class="held-text small attempt-reach" data-reach={l.mark}>
          {l.text}
        </p>
      ))}
      <h3>Targets and accounts</h3>
      {plan.targets.map((t) => (
        <div key={t.target} class={`plan-target ${t.verdict === "out" ? "plan-target-out" : ""}`}>
          <div>
            <strong class="mono">{t.target}</strong> {t.verdict === "in" ? <Pill tone="ok">in</Pill> : <Pill tone="bad">out</Pill>} {t.reason && <span class="muted">{t.reason}</span>}
          </div>
          {t.accounts.map((a) => (
            <div key={a.accountId} class={`decision decision-${a.verdict}`}>
              <span class="mono">{a.accountId}</span> — {withoutIsoTime(a.reason)}
              {a.until && a.until > Date.now() ? <Countdown until={a.until} prefix=" · " /> : null}
            </div>
          ))}
        </div>
      ))}
      {plan.decisions.length > 0 && (
        <>
          <h3>Target decisions</h3>
          {plan.decisions.map((d, i) => (
            <div key={i} class={`decision decision-${d.verdict}`}>
              <strong class="mono">{d.subject}</strong> <span class="muted">{d.verdict}</span> — {d.reason}
            </div>
          ))}
        </>
      )}
    </div>
  );
}

const COMBO_EXAMPLE = `{
  "name": "my-combo",
  "strategy": "fallback",
  "targets": [{ "model": "provider/model" }]
}`;

/** A combo as the config file writes it, as JSON for the combo form (the listing's `source`, `active`, `error` left out). */
function comboJson(c: Combo): string {
  const { source: _source, active: _active, error: _error, ...spec } = c;
  return JSON.stringify(spec, null, 2);
}

/**
 * Creates a combo in the database from its config-file shape (validated by the API like the file), or
 * with `edit` changes a stored combo in place (`PUT /combos/{name}`, the form prefilled with it; a
 * combo is not renamed, so another name in the JSON is refused by the API).
 */
function ComboForm({ done, editing, edit, stopEdit }: { done: () => void; editing: (on: boolean) => void; edit?: Combo; stopEdit: () => void }) {
  const [open, setOpen] = useState(edit !== undefined);
  const [text, setText] = useState(edit ? comboJson(edit) : COMBO_EXAMPLE);
  const [error, setError] = useState<string | undefined>();
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => editing(open), [open]);
  useEffect(() => () => editing(false), []);
  useEffect(() => {
    if (edit) field.current?.focus();
  }, []);
  if (!open)
    return (
      <button type="button" class="btn btn-small" onClick={() => setOpen(true)}>
        New combo…
      </button>
    );
  const close = () => {
    setOpen(false);
    if (edit) stopEdit();
  };
  const save = async () => {
    setError(undefined);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      setError("The combo must be JSON.");
      return;
    }
    try {
      await (edit ? api(`/combos/${encodeURIComponent(edit.name)}`, { method: "PUT", body }) : api("/combos", { method: "POST", body }));
      setText(COMBO_EXAMPLE);
      close();
      done();
    } catch (e) {
      setError(comboErrorText(e));
    }
  };
  return (
    <div class="combo-form" data-form={edit ? "combo-edit" : "combo-new"}>
      <label for="combo-json">{edit ? `Combo ${edit.name} (the config file's shape, as JSON)` : "New combo (the config file's shape, as JSON)"}</label>
      <textarea id="combo-json" ref={field} rows={edit ? 10 : 7} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      <ErrorLine error={error} />
      <div class="form-row">
        <ActionButton tone="primary" small onClick={save}>
          Save combo
        </ActionButton>
        <button type="button" class="btn btn-small" onClick={close}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** Names the new-alias field suggests as its placeholder, in order: the first no alias or combo has. */
const ALIAS_SUGGESTIONS = ["fast", "smart", "cheap", "coder", "local"];

/**
 * The new-alias field's placeholder: the first of {@link ALIAS_SUGGESTIONS} that is not in `taken`
 * (the names of the aliases and combos, which share one namespace), else `alias-2`, `alias-3`, … — never
 * a name that exists, which the API would refuse.
 */
export function aliasPlaceholder(taken: ReadonlySet<string>): string {
  for (const n of ALIAS_SUGGESTIONS) if (!taken.has(n)) return n;
  for (let i = 2; ; i++) if (!taken.has(`alias-${i}`)) return `alias-${i}`;
}

/**
 * A refused alias's message in the form's words: the API names its fields (`target: unknown provider
 * …`, a name "exists; change it with PUT"), the form its labels ("Points at: unknown provider …", Edit
 * on the alias's row).
 */
export function aliasErrorText(e: unknown): string {
  if (!(e instanceof ApiError) || !e.param) return (e as Error).message;
  const label = e.param === "target" ? "Points at" : e.param === "name" ? "Alias" : e.param;
  const rest = (e.message.startsWith(`${e.param}: `) ? e.message.slice(e.param.length + 2) : e.message)
    .replace(/^(An alias named .*) exists; change it with PUT\.$/, "$1 exists: Edit on its row changes it.")
    .replace(/^(A combo named .*) exists; change it with PUT\.$/, "$1 exists: choose another name.");
  return `${label}: ${rest}`;
}

/**
 * Adds an alias (`POST /aliases`), or with `edit` changes where a database alias points (`PUT
 * /aliases/{name}`; an alias is not renamed, so its name is read-only then). `taken`: the names of the
 * aliases and combos, which the placeholder never suggests.
 */
function AliasForm({ done, editing, taken, edit, stopEdit }: { done: () => void; editing: (on: boolean) => void; taken: ReadonlySet<string>; edit?: Alias; stopEdit: () => void }) {
  const [name, setName] = useState(edit?.name ?? "");
  const [target, setTarget] = useState(edit?.target ?? "");
  const [error, setError] = useState<string | undefined>();
  const targetField = useRef<HTMLInputElement>(null);
  useEffect(() => editing(edit !== undefined || name !== "" || target !== ""), [name, target, edit]);
  useEffect(() => () => editing(false), []);
  useEffect(() => {
    if (edit) targetField.current?.focus();
  }, []);
  return (
    <form
      class="form-row"
      data-form={edit ? "alias-edit" : "alias-new"}
      onSubmit={(e) => {
        e.preventDefault();
        setError(undefined);
        const saved = edit
          ? api(`/aliases/${encodeURIComponent(edit.name)}`, { method: "PUT", body: { target: target.trim() } })
          : api("/aliases", { method: "POST", body: { name: name.trim(), target: target.trim() } });
        saved
          .then(() => {
            setName("");
            setTarget("");
            if (edit) stopEdit();
            done();
          })
          .catch((err) => setError(aliasErrorText(err)));
      }}
    >
      <div class="field">
        <label for="al-name">{edit ? "Alias" : "New alias"}</label>
        <input id="al-name" value={name} readOnly={edit !== undefined} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder={edit ? undefined : aliasPlaceholder(taken)} required />
      </div>
      <div class="field grow">
        <label for="al-target">Points at</label>
        <input id="al-target" ref={targetField} value={target} onInput={(e) => setTarget((e.target as HTMLInputElement).value)} placeholder="provider/model or a combo" required />
      </div>
      <button class="btn" type="submit">
        {edit ? "Save alias" : "Add alias"}
      </button>
      {edit && (
        <button type="button" class="btn" onClick={stopEdit}>
          Cancel
        </button>
      )}
      <ErrorLine error={error} />
    </form>
  );
}

/** "combo fast added, alias x removed, …" from a `routing_changed` event (names only). */
export function routingChangeText(e: Extract<LiveEvent, { type: "routing_changed" }>): string {
  const parts: string[] = [];
  const names = (kind: string, c: { added: string[]; removed: string[]; changed: string[] } | undefined) => {
    if (!c) return;
    for (const [verb, list] of [["added", c.added], ["removed", c.removed], ["changed", c.changed]] as const) {
      if (list.length > 0) parts.push(`${kind}${list.length > 1 ? "s" : ""} ${list.join(", ")} ${verb}`);
    }
  };
  names("combo", e.combos);
  names("alias", e.aliases);
  names("provider", e.providers);
  if (e.settings?.length) parts.push(`settings ${e.settings.join(", ")} changed`);
  return parts.join("; ");
}

export function RoutingPage() {
  const data = useData(async () => {
    const [combos, aliases, providers] = await Promise.all([
      optional(api<{ combos: Combo[] }>("/combos")),
      optional(api<{ aliases: Alias[] }>("/aliases")),
      optional(api<{ providers: Provider[] }>("/providers")),
    ]);
    return { combos: combos?.combos, aliases: aliases?.aliases, providers: providers?.providers ?? [] };
  });
  const d = data.data;
  const names = d
    ? [
        ...(d.aliases ?? []).map((a) => a.name),
        ...(d.combos ?? []).map((c) => c.name),
        ...d.providers.flatMap((p) => [...Object.keys(p.models ?? {}), ...(p.discoveredModels ?? [])].map((m) => `${p.id}/${m}`)),
      ]
    : [];
  const taken = new Set([...(d?.aliases ?? []).map((a) => a.name), ...(d?.combos ?? []).map((c) => c.name)]);
  /** The database alias being changed in the alias form, if any. */
  const [editAlias, setEditAlias] = useState<Alias | undefined>();
  /** The stored combo being changed in the combo form, if any. */
  const [editCombo, setEditCombo] = useState<Combo | undefined>();
  /**
   * Why the last Delete was refused (a combo or alias that uses the object, the config file …), shown
   * under its list. Delete asks twice (newuser14 K14: one stray click removed an alias agents use);
   * `remove` is its Confirm, which never rejects: a refusal closes the choice and is said here.
   */
  const [removeError, setRemoveError] = useState<{ kind: "combos" | "aliases"; text: string } | undefined>();
  /**
   * The `routing_changed` texts this page's own Deletes will cause ("combo team3 removed"): such an
   * event re-reads the lists even while a form is open, never "changed elsewhere" (try18 D13). Each is
   * taken off when its event arrives, form open or not, or when the Delete fails.
   */
  const ownChanges = useRef<string[]>([]);
  /** Deletes a stored combo or alias; what the live region says when it was deleted (a refusal is shown under its list). */
  const remove = (kind: "combos" | "aliases", name: string): Promise<string | undefined> => {
    setRemoveError(undefined);
    const mine = `${kind === "aliases" ? "alias" : "combo"} ${name} removed`;
    ownChanges.current.push(mine);
    return api(`/${kind}/${encodeURIComponent(name)}`, { method: "DELETE" })
      .then(() => {
        if (kind === "aliases" && editAlias?.name === name) setEditAlias(undefined);
        if (kind === "combos" && editCombo?.name === name) setEditCombo(undefined);
        data.reload();
        return `${kind === "aliases" ? "Alias" : "Combo"} ${name} deleted.`;
      })
      .catch((e) => {
        const at = ownChanges.current.indexOf(mine);
        if (at >= 0) ownChanges.current.splice(at, 1);
        setRemoveError({ kind, text: `${name} was not deleted: ${(e as Error).message}` });
        return undefined;
      });
  };
  // Changes made elsewhere: re-read at once, unless a combo or alias is being written here; then a
  // notice (what changed) waits until the edit is saved, cancelled or emptied, or Show is pressed.
  const edits = useRef(new Set<string>());
  const [pending, setPending] = useState<string[] | undefined>();
  const waiting = useRef(false);
  const soon = useDebounced(data.reload, 100);
  const show = () => {
    waiting.current = false;
    setPending(undefined);
    data.reload();
  };
  const editors = useRef<Record<"combo" | "alias", (on: boolean) => void> | undefined>(undefined);
  editors.current ??= {
    combo: (on) => editing("combo", on),
    alias: (on) => editing("alias", on),
  };
  function editing(form: string, on: boolean) {
    if (on) edits.current.add(form);
    else edits.current.delete(form);
    if (edits.current.size === 0 && waiting.current) show();
  }
  useLive((e) => {
    if (e.type !== "routing_changed" && e.type !== "hello") return;
    // The page's own Delete's event is taken off the list whether or not a form is open: left there, a
    // later change of the same name made elsewhere would pass for the page's own (review19 R8).
    const own = e.type === "routing_changed" ? ownChanges.current.indexOf(routingChangeText(e)) : -1;
    if (own >= 0) ownChanges.current.splice(own, 1);
    if (edits.current.size === 0 || own >= 0) return soon();
    // After a reconnect something may have changed unseen: re-read once the edit is over.
    waiting.current = true;
    if (e.type === "routing_changed") setPending((p) => [...(p ?? []), routingChangeText(e)].filter((x) => x !== ""));
  });
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Routing</h1>
          <p class="muted">Model names resolve as provider/model, then an alias, then a combo, then a guess from the name.</p>
        </div>
      </header>
      <DryRun names={names} />
      <ErrorLine error={data.error} />
      {pending && (
        <div class="notice" role="status" data-notice="routing-changed">
          <span>
            Routing was changed elsewhere{pending.length > 0 ? `: ${pending.slice(-3).join("; ")}` : ""}. The lists below are as they were; your edit is kept.
          </span>
          <button type="button" class="btn btn-small" onClick={show}>
            Show the changes
          </button>
        </div>
      )}
      <div class="grid-2">
        <Card title="Combos">
          {d && !d.combos && <p class="muted">This gateway's admin API does not list combos (no GET /admin/api/combos).</p>}
          {d?.combos?.length === 0 && (
            <Empty title="No combos">
              <p>
                A combo is an ordered list of targets with a strategy (fallback, also written priority; round-robin; weighted; least-used), addressed like a model name. Make one here with New combo, or declare it under <code>combos:</code> in the config file.
              </p>
            </Empty>
          )}
          {d?.combos?.map((c) => (
            <div key={c.name} class="combo" data-combo={c.name} data-row="">
              <div class="card-head">
                <h2>
                  <span class="mono">{c.name}</span> <span class="tag">{c.strategy}</span> <span class="tag tag-soft">{c.source === "config" ? "config file" : "database"}</span>
                  {c.active === false && (
                    <>
                      {" "}
                      <Pill tone="bad" title={c.error}>
                        inactive
                      </Pill>
                    </>
                  )}
                </h2>
                {c.source === "db" && (
                  <EditDelete editing={editCombo?.name === c.name} edit={() => setEditCombo(c)} remove={() => remove("combos", c.name)} />
                )}
              </div>
              {c.active === false && c.error && <p class="held-text small">{c.error}</p>}
              <ol class="targets">
                {c.targets.map((t, i) => (
                  <li key={i}>
                    <span class="mono">{t.model}</span>
                    {t.account ? <span class="muted"> on {t.account}</span> : null}
                    {t.weight !== undefined && c.strategy === "weighted" ? <span class="muted"> · weight {t.weight}</span> : null}
                    {t.when ? <div class="muted small mono">when {whenText(t.when)}</div> : null}
                  </li>
                ))}
              </ol>
            </div>
          ))}
          {removeError?.kind === "combos" && <ErrorLine error={removeError.text} />}
          {d?.combos && <ComboForm key={editCombo?.name ?? ""} done={data.reload} editing={editors.current.combo} edit={editCombo} stopEdit={() => setEditCombo(undefined)} />}
        </Card>
        <Card title="Aliases" class="aliases-card">
          {d && !d.aliases && <p class="muted">This gateway's admin API does not list aliases (no GET /admin/api/aliases).</p>}
          {d?.aliases?.length === 0 && <p class="muted">No aliases. An alias is a short name for one model or combo.</p>}
          {d?.aliases && d.aliases.length > 0 && (
            <table class="aliases">
              <thead>
                <tr>
                  <th>Alias</th>
                  <th>Points at</th>
                  <th>Source</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {d.aliases.map((a) => (
                  <tr key={a.name} data-alias={a.name}>
                    <td class="mono alias-name">{a.name}</td>
                    <td class="mono alias-target" data-label="Points at">
                      <Breakable name={a.target} />
                      {a.active === false && (
                        <div class="held-text small" title={a.error}>
                          inactive: {a.error}
                        </div>
                      )}
                    </td>
                    <td data-label="Source">{a.source === "config" ? "config file" : "database"}</td>
                    <td class="alias-actions">
                      {a.source === "db" && (
                        <EditDelete editing={editAlias?.name === a.name} edit={() => setEditAlias(a)} remove={() => remove("aliases", a.name)} />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {removeError?.kind === "aliases" && <ErrorLine error={removeError.text} />}
          {d?.aliases && (
            <AliasForm key={editAlias?.name ?? ""} done={data.reload} editing={editors.current.alias} taken={taken} edit={editAlias} stopEdit={() => setEditAlias(undefined)} />
          )}
        </Card>
      </div>
      <ConfigReloadCard />
    </div>
  );
}
