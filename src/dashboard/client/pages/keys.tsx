/**
 * Keys (SPEC 9.4, 9.6): client keys with their scopes, tags, limits, this minute's requests and tokens
 * against rpm / tpm, and budget use, which follow the keys' requests live; create (the secret is shown
 * once, in this view only, and never again), rotate (a new secret shown once the same way; the key, its
 * limits and their use stay; the old secret accepted for the grace chosen), disable for a while and
 * enable again (newuser12a G16), edit a key's limits and tag (key-limits-edit.tsx), and revoke. No
 * secret is ever listed.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { ActionButton, Card, Empty, ErrorLine, Pill, useData, useDebounced, useNow } from "../components.tsx";
import { dollarsPair } from "../../../limits/dollars.ts";
import { budgetResets, clock, count, pct } from "../format.ts";
import { useLive } from "../live.ts";
import { ConfirmAction } from "../confirm-action.tsx";
import { announce } from "../announce.ts";
import { COPIED, copyByHand, copyText, selectText } from "../copy.ts";
import { KeyRotationNote, UnpricedBudgetNote } from "./key-row-notes.tsx";
import { keyState } from "../key-state.ts";
import { EditLimits } from "./key-limits-edit.tsx";
import type { BudgetUse, KeyInfo, KeyLimits, MinuteUse } from "../types.ts";

/** A key's limits as short text: `60 rpm · 100k tpm · 4 concurrent · models a, b`. */
export function limitsText(l: KeyLimits | undefined): string {
  if (!l) return "none";
  const parts: string[] = [];
  if (l.rpm !== undefined) parts.push(`${count(l.rpm)} rpm`);
  if (l.tpm !== undefined) parts.push(`${count(l.tpm)} tpm`);
  if (l.concurrency !== undefined) parts.push(`${l.concurrency} concurrent`);
  if (l.models?.length) parts.push(`models ${l.models.join(", ")}`);
  return parts.join(" · ") || (l.budgets?.length ? "budgets only" : "none");
}

/**
 * One budget's use as a bar: `$1.20 of $5.00 per 1d, resets in 3h`, and its share used. The bar stops
 * at full; the share does not: a window can end over its budget (requests in flight when it was
 * reached), and `$0.10 of $0.05` must read 200 %, as `switchyard keys list` says, not 100 %.
 */
function BudgetBar({ b, now }: { b: BudgetUse; now: number }) {
  const max = b.budget.usd ?? b.budget.tokens ?? 0;
  const used = max > 0 ? b.used / max : 0;
  const share = Math.min(1, used);
  // one precision for both USD amounts: "$0.00 of $0.5000" mixed two decimals with four (try18 D5)
  const [usedText, maxText] = b.budget.usd !== undefined ? dollarsPair(b.used, max) : [`${count(b.used)} tokens`, `${count(max)} tokens`];
  return (
    <div class="quota budget">
      <div class="quota-head">
        <span class="quota-name">{b.budget.window}</span>
        <span>
          {usedText} of {maxText}
        </span>
      </div>
      <div class="bar">
        <div class={`bar-fill bar-${share >= 0.9 ? "bad" : share >= 0.7 ? "warn" : "ok"}`} style={{ width: `${Math.max(share, 0.005) * 100}%` }} />
      </div>
      <div class="quota-foot">
        {/* the page's clock ticks once a second: a window that began since its last tick would read "24h 1m" (review14 R11) */}
        <span>{b.resetsAt ? budgetResets(b.resetsAt, Math.max(now, Date.now())) : "window opens at the next request"}</span>
        <span class="budget-share">{pct(used)}</span>
      </div>
    </div>
  );
}

/**
 * This minute's use of a key's rpm and tpm limits (`this minute: 2 of 2 requests · 1,200 of 10k
 * tokens`), a limit that is reached in the refusal colour: a key that just got 429 shows why here.
 */
function MinuteUseLine({ m }: { m?: MinuteUse }) {
  if (!m?.requests && !m?.tokens) return null;
  const part = (u: { used: number; limit: number }, unit: string, what: string) => (
    <span data-minute={what} class={u.used >= u.limit ? "held-text" : undefined}>
      {count(u.used)} of {count(u.limit)} {unit}
    </span>
  );
  return (
    <div class="minute-use">
      this minute: {m.requests && part(m.requests, "requests", "requests")}
      {m.requests && m.tokens && " · "}
      {m.tokens && part(m.tokens, "tokens", "tokens")}
    </div>
  );
}

/** A limit field's text as its number: undefined when empty (no limit); only a plain whole number reaches here (see `notAWholeNumber`). */
const intOrUndefined = (s: string) => (s.trim() === "" ? undefined : Number(s.trim()));

/** The create form's labels by the admin API's field (`POST /admin/api/keys` names them in `param`). */
const KEY_FIELD_LABELS: Record<string, string> = {
  name: "Name",
  tag: "Tag",
  scopes: "admin scope",
  "limits.rpm": "Requests/min",
  "limits.tpm": "Tokens/min",
  "limits.concurrency": "Concurrent",
  "limits.budgets[0].usd": "Budget (USD)",
  "limits.budgets[0].window": "Budget window",
};

/**
 * A refused key's message in the form's words: the admin API names its fields ("limits.rpm: rpm must
 * be at least 1; got -3"), the form its labels ("Requests/min must be at least 1; got -3"). The
 * field's leading name in the message becomes the label; a field the form has no label for keeps the
 * API's words.
 */
export function keyErrorText(e: unknown): string {
  if (!(e instanceof ApiError) || !e.param) return (e as Error).message;
  const label = KEY_FIELD_LABELS[e.param];
  if (!label) return e.message;
  const rest = e.message.startsWith(`${e.param}: `) ? e.message.slice(e.param.length + 2) : e.message;
  const leaf = e.param.slice(e.param.lastIndexOf(".") + 1);
  return rest.startsWith(`${leaf} `) ? `${label} ${rest.slice(leaf.length + 1)}` : `${label}: ${rest}`;
}

/**
 * The form's own check of a limit field (requests/min, tokens/min, concurrent): undefined when empty or
 * a plain whole number (digits, a minus sign allowed so that the admin API says "at least 1"), else why
 * not, in its label. `2.5`, `0x10` and `1e3` are numbers to `Number()`, which the form used to floor
 * into 2, 16 and 1,000 (try18 D1): a limit nobody chose; they are refused here, before any request.
 */
function notAWholeNumber(label: string, s: string): string | undefined {
  const t = s.trim();
  if (t === "" || /^-?\d+$/.test(t)) return undefined;
  return Number.isFinite(Number(t)) ? `${label} must be a whole number; got ${t}` : `${label} must be a number; got ${JSON.stringify(t)}`;
}

/**
 * The form's own check of the budget's amount: undefined when empty or a plain decimal (`5`, `0.50`,
 * `.5`; a minus sign allowed so that the admin API says "greater than 0"), else why not, in its label
 * (`0x10` and `1e3` are numbers to `Number()`, not amounts a person types).
 */
function notAnAmount(label: string, s: string): string | undefined {
  const t = s.trim();
  if (t === "" || /^-?(\d+\.?\d*|\.\d+)$/.test(t)) return undefined;
  return Number.isFinite(Number(t)) ? `${label} must be an amount in dollars such as 2.50; got ${t}` : `${label} must be a number; got ${JSON.stringify(t)}`;
}

/**
 * A new secret, shown this once (a created or rotated key): Copy, and Done to hide it for good. `note`:
 * what the answer added (a rotated stored key that shares its name with a config key: that one is not
 * affected). Copy goes through src/dashboard/client/copy.ts (a selected read-only field on a
 * non-secure origin) and says beside it, and through #announcer, "Copied" or, when nothing copied,
 * selects the secret and says to press Ctrl+C (⌘C on a Mac). `focus`: the Copy button takes the focus
 * when the box appears (a key just created: its form's Enter left the focus below the box; a key just
 * rotated: its row's Confirm). `hide` (Done) removes the box and puts the focus back where the user
 * came from (the Create form's Name field, the rotated key's Rotate button): the box's Done button goes
 * with it, and focus fell to `<body>`.
 */
function SecretOnce({ name, secret, said, note, hide, focus }: { name: string; secret: string; said: string; note?: string; hide: () => void; focus?: boolean }) {
  const [copied, setCopied] = useState<string | undefined>();
  const value = useRef<HTMLElement>(null);
  const copyButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (focus) copyButton.current?.focus();
  }, [focus, secret]);
  useEffect(() => setCopied(undefined), [secret]);
  const copy = () =>
    void copyText(secret).then((ok) => {
      const text = ok ? COPIED : copyByHand();
      if (!ok) selectText(value.current);
      setCopied(text);
      announce(text);
    });
  return (
    <div class="secret-once" data-secret-for={name}>
      <strong>{said}</strong> Copy it now: it is shown this once and cannot be read again.
      {note && <p class="key-note">{note}</p>}
      <code class="secret-value" ref={value}>
        {secret}
      </code>
      <div class="form-row">
        <button type="button" class="btn btn-small" ref={copyButton} onClick={copy}>
          Copy
        </button>
        <button type="button" class="btn btn-small" onClick={hide}>
          Done, hide it
        </button>
        {copied && <span class="copy-hint muted">{copied}</span>}
      </div>
    </div>
  );
}

/** How long a rotated key's old secret is still accepted (`POST /keys/{name}/rotate`'s `grace`). */
const GRACES = [
  { value: "0", label: "refused at once" },
  { value: "10m", label: "accepted 10 min more" },
  { value: "1h", label: "accepted 1 hour more" },
  { value: "24h", label: "accepted 24 h more" },
] as const;

/** A rotated key as the page shows it once: its new secret, until when the old one is accepted (ms since the epoch), and the answer's note. */
interface Rotated {
  name: string;
  secret: string;
  previousUntil?: number;
  /** The admin API's `note` (a config key of the same name is not affected). */
  note?: string;
}

/**
 * Focus back on the rotated key's row once its new secret is hidden: its Rotate button, else the row
 * itself (its actions closed or changed; made focusable, `tabindex=-1`), else the page's `<h1>` (the key
 * gone from the list meanwhile).
 */
function focusRotatedRow(name: string): void {
  const row = [...document.querySelectorAll<HTMLElement>("tr[data-key]")].find((r) => r.dataset.key === name && !r.hasAttribute("data-revoked"));
  const button = row && [...row.querySelectorAll<HTMLButtonElement>("button")].find((b) => b.textContent?.trim() === "Rotate" && !b.disabled);
  const target = button ?? row ?? document.querySelector<HTMLElement>("main h1");
  if (!target) return;
  if (target !== button && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
  target.focus();
}

/**
 * Rotate: a new secret for a stored key (newuser12a G1; `switchyard keys rotate` did it alone). The
 * key's identity, limits and their use stay; the old secret is refused at once or after the grace
 * chosen. The new secret is handed to `rotated`, which shows it once.
 */
function RotateButton({ name, rotated }: { name: string; rotated: (r: Rotated) => void }) {
  const [grace, setGrace] = useState<string>("0");
  return (
    <ConfirmAction
      label="Rotate"
      confirmLabel="Confirm rotate"
      errorText={keyErrorText}
      // each rotation starts from the default: the old secret refused at once
      onOpen={() => setGrace("0")}
      run={async () => {
        const r = await api<{ secret: string; previousUntil?: number; note?: string }>(`/keys/${encodeURIComponent(name)}/rotate`, { method: "POST", body: { grace } });
        rotated({ name, secret: r.secret, ...(r.previousUntil !== undefined ? { previousUntil: r.previousUntil } : {}), ...(r.note ? { note: r.note } : {}) });
        // said through the live region (ConfirmAction); the box's Copy takes the focus (SecretOnce
        // `focus`); the secret itself is never announced
        return `Key ${name} rotated. Its new secret is shown once above the list of keys: copy it now.`;
      }}
    >
      <label class="small">
        old secret{" "}
        <select value={grace} onChange={(e) => setGrace((e.target as HTMLSelectElement).value)}>
          {GRACES.map((g) => (
            <option key={g.value} value={g.value}>
              {g.label}
            </option>
          ))}
        </select>
      </label>
    </ConfirmAction>
  );
}

function CreateKey({ created }: { created: () => void }) {
  const [name, setName] = useState("");
  const [tag, setTag] = useState("");
  const [admin, setAdmin] = useState(false);
  const [lim, setLim] = useState({ rpm: "", tpm: "", concurrency: "", budgetWindow: "1d", budgetUsd: "" });
  const [error, setError] = useState<string | undefined>();
  const [secret, setSecret] = useState<{ name: string; secret: string } | undefined>();
  // One request per submit: a double-click sent a second create while the first was in flight, whose
  // "already exists" showed in red under the new secret (try18 D8). The ref holds at once (a second
  // click can come before the re-render that disables the button).
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);
  const nameField = useRef<HTMLInputElement>(null);
  const create = async () => {
    if (inFlight.current) return;
    setError(undefined);
    // Not a whole number is said here, in the field's name: sent, "lots" went as null ("tpm must be a
    // number; got null"), and 2.5 was floored into a limit of 2 (try18 D1).
    const nan = notAWholeNumber("Requests/min", lim.rpm) ?? notAWholeNumber("Tokens/min", lim.tpm) ?? notAWholeNumber("Concurrent", lim.concurrency) ?? notAnAmount("Budget (USD)", lim.budgetUsd);
    if (nan) return setError(nan);
    const limits: KeyLimits = {};
    if (intOrUndefined(lim.rpm) !== undefined) limits.rpm = intOrUndefined(lim.rpm);
    if (intOrUndefined(lim.tpm) !== undefined) limits.tpm = intOrUndefined(lim.tpm);
    if (intOrUndefined(lim.concurrency) !== undefined) limits.concurrency = intOrUndefined(lim.concurrency);
    if (lim.budgetUsd.trim() !== "") limits.budgets = [{ window: lim.budgetWindow, usd: Number(lim.budgetUsd.trim()) }];
    const body = { name: name.trim(), scopes: admin ? ["admin"] : [], ...(tag.trim() ? { tag: tag.trim() } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
    inFlight.current = true;
    setBusy(true);
    try {
      const r = await api<{ secret: string; key: { name: string } }>("/keys", { method: "POST", body });
      const made = r.key?.name ?? name.trim();
      setSecret({ name: made, secret: r.secret });
      // the box appears above the form; its Copy takes the focus (SecretOnce `focus`) and a screen
      // reader hears why (the secret itself is never announced)
      announce(`Key ${made} created. Its secret is shown once above the form: copy it now.`);
      setName("");
      setTag("");
      setAdmin(false);
      setLim({ rpm: "", tpm: "", concurrency: "", budgetWindow: "1d", budgetUsd: "" });
      created();
    } catch (e) {
      setError(keyErrorText(e));
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  return (
    <Card title="Create a key">
      {secret && (
        <SecretOnce
          name={secret.name} secret={secret.secret} said={`Key ${secret.name} created.`} hide={() => {
            setSecret(undefined);
            nameField.current?.focus();
          }}
          focus
        />
      )}
      <form
        class="form-row"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <div class="field">
          <label for="key-name">Name</label>
          <input
            id="key-name"
            ref={nameField}
            name="name"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
            placeholder="laptop"
            maxLength={64}
            title={'Letters, digits, ".", "_" and "-", starting with a letter or digit (the config file\'s rule for keys[].name)'}
            autoComplete="off"
            spellcheck={false}
            required
          />
        </div>
        <div class="field">
          <label for="key-tag">Tag (routing predicates)</label>
          <input id="key-tag" name="tag" value={tag} onInput={(e) => setTag((e.target as HTMLInputElement).value)} placeholder="optional" />
        </div>
        <div class="field">
          <label for="key-rpm">Requests/min</label>
          <input id="key-rpm" class="narrow" inputMode="numeric" value={lim.rpm} onInput={(e) => setLim({ ...lim, rpm: (e.target as HTMLInputElement).value })} placeholder="no limit" />
        </div>
        <div class="field">
          <label for="key-tpm">Tokens/min</label>
          <input id="key-tpm" class="narrow" inputMode="numeric" value={lim.tpm} onInput={(e) => setLim({ ...lim, tpm: (e.target as HTMLInputElement).value })} placeholder="no limit" />
        </div>
        <div class="field">
          <label for="key-conc">Concurrent</label>
          <input id="key-conc" class="narrow" inputMode="numeric" value={lim.concurrency} onInput={(e) => setLim({ ...lim, concurrency: (e.target as HTMLInputElement).value })} placeholder="no limit" />
        </div>
        <div class="field">
          <label for="key-budget">Budget (USD)</label>
          <span class="form-row">
            <input id="key-budget" class="narrow" inputMode="decimal" value={lim.budgetUsd} onInput={(e) => setLim({ ...lim, budgetUsd: (e.target as HTMLInputElement).value })} placeholder="none" />
            <select aria-label="Budget window" value={lim.budgetWindow} onChange={(e) => setLim({ ...lim, budgetWindow: (e.target as HTMLSelectElement).value })}>
              {["5h", "1d", "7d", "30d"].map((w) => (
                <option key={w} value={w}>
                  per {w}
                </option>
              ))}
            </select>
          </span>
        </div>
        <label class="check">
          <input type="checkbox" name="admin" checked={admin} onChange={(e) => setAdmin((e.target as HTMLInputElement).checked)} /> admin scope
        </label>
        <button class="btn btn-primary" type="submit" disabled={busy || name.trim() === ""} aria-busy={busy ? "true" : undefined}>
          {busy ? "Creating…" : "Create key"}
        </button>
      </form>
      <ErrorLine error={error} />
      <p class="muted small">
        Over a rate or concurrency limit a caller gets 429 with Retry-After; over a budget, 429 naming it and when its window resets. A model allow-list is set with <code>switchyard keys create NAME --models LIST</code> or the config file's <code>keys[].limits</code>.
      </p>
    </Card>
  );
}

/**
 * Disable (a key's requests refused with 403 `key_disabled` until it is enabled; it keeps its secret,
 * limits and their use) or Enable again: `POST /keys/{name}/disable|enable`, as `switchyard keys
 * disable|enable NAME`. The answer's note (a config key of the same name is not affected), or none, is
 * handed to `noted`.
 */
function DisableButton({ name, disabled, done, noted }: { name: string; disabled: boolean; done: () => void; noted: (note: string | undefined) => void }) {
  const [error, setError] = useState<string | undefined>();
  return (
    <>
      <ActionButton
        small
        title={disabled ? "Serve this key's requests again" : "Refuse this key's requests (403) until it is enabled again; it keeps its secret, limits and their use"}
        onClick={async () => {
          try {
            setError(undefined);
            noted(undefined);
            const r = await api<{ note?: string }>(`/keys/${encodeURIComponent(name)}/${disabled ? "enable" : "disable"}`, { method: "POST" });
            noted(r?.note);
            done();
            announce(`Key ${name} ${disabled ? "enabled" : "disabled"}.`);
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        {disabled ? "Enable" : "Disable"}
      </ActionButton>
      {error && <span class="held-text small">{error}</span>}
    </>
  );
}

/**
 * Revoke (asked twice): `DELETE /keys/{name}`, as `switchyard keys revoke NAME`; the key's requests are
 * refused from then on. The answer's note (a config key of the same name is not affected), or none, is
 * handed to `noted`.
 */
function RevokeButton({ name, done, noted }: { name: string; done: () => void; noted: (note: string | undefined) => void }) {
  return (
    <ConfirmAction
      label="Revoke"
      confirmLabel="Confirm revoke"
      danger
      errorText={keyErrorText}
      run={async () => {
        const r = await api<{ note?: string }>(`/keys/${encodeURIComponent(name)}`, { method: "DELETE" });
        noted(r?.note);
        done();
        return `Key ${name} revoked.`;
      }}
    />
  );
}

/**
 * The State column's label ({@link keyState}): revoked, disabled, "budget used up · until 11:20 PM" in
 * the refusal colour for a key refused until its budget window resets, or a green "active".
 */
function KeyStatePill({ k, now }: { k: KeyInfo; now: number }) {
  const state = keyState(k, Math.max(now, Date.now()));
  switch (state.kind) {
    case "revoked":
      return (
        <Pill tone="off">
          revoked <span class="nowrap">{clock(state.at)}</span>
        </Pill>
      );
    case "disabled":
      return (
        <Pill tone="warn" title="Its requests are refused (403 key_disabled) until it is enabled">
          disabled <span class="nowrap">{clock(state.at)}</span>
        </Pill>
      );
    case "budget_used_up":
      return (
        <Pill tone="bad" title={`Its ${state.windows.join(" and ")} budget is used up: every request is refused (429 key_budget_exceeded) until the window resets at ${clock(state.until)}`}>
          budget used up <span class="nowrap">· until {clock(state.until)}</span>
        </Pill>
      );
    case "active":
      return <Pill tone="ok">active</Pill>;
  }
}

/** A tag of at most this many characters is never broken inside (a longer one breaks where it must, so the table fits). */
const SHORT_TAG = 16;

export function KeysPage() {
  const keys = useData(() => api<{ keys: KeyInfo[] }>("/keys"));
  // Budget use and requests in flight change as a key's requests finish: re-read then (and after a
  // reconnect), at most once a second. A key created or revoked elsewhere (the CLI, another browser,
  // another instance sharing the store) is re-read at once.
  const refresh = useDebounced(keys.reload, 1000);
  const soon = useDebounced(keys.reload, 100);
  useLive((e) => {
    if (e.type === "keys_changed") soon();
    else if ((e.type === "request_finished" && e.key) || e.type === "hello") refresh();
  });
  const now = useNow();
  const [rotated, setRotated] = useState<Rotated | undefined>();
  /** The last Disable, Enable or Revoke answer's note (a stored key sharing a config key's name). */
  const [switchNote, setSwitchNote] = useState<string | undefined>();
  const list = keys.data?.keys ?? [];
  // This minute's rpm / tpm use falls as the minute moves on without any event: re-read while some is shown.
  const counting = list.some((k) => (k.use?.minute?.requests?.used ?? 0) > 0 || (k.use?.minute?.tokens?.used ?? 0) > 0);
  useEffect(() => {
    if (!counting) return;
    const t = setInterval(keys.reload, 5000);
    return () => clearInterval(t);
  }, [counting]);
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Keys</h1>
          <p class="muted">Client keys callers present as Authorization: Bearer or x-api-key. Secrets are stored hashed and never shown again.</p>
        </div>
      </header>
      <CreateKey created={keys.reload} />
      {rotated && (
        <SecretOnce
          name={rotated.name}
          secret={rotated.secret}
          said={`Key ${rotated.name} has a new secret; the old one is ${rotated.previousUntil === undefined ? "refused from now on" : `accepted until ${clock(rotated.previousUntil)}`}.`}
          note={rotated.note}
          hide={() => {
            setRotated(undefined);
            focusRotatedRow(rotated.name);
          }}
          focus
        />
      )}
      <ErrorLine error={keys.error} />
      <Card title="Keys">
        {switchNote && (
          <p class="key-note" role="status">
            {switchNote}
          </p>
        )}
        {keys.data && list.length === 0 && (
          <Empty title="No keys yet">
            <p>Callers on this machine need no key while server.require_api_key is off (with keys or without). Create one for callers on other machines, or to tell callers apart in Usage and give them limits.</p>
          </Empty>
        )}
        {list.length > 0 && (
          <div class="table-wrap">
            <table class="keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Scopes</th>
                  <th>Tag</th>
                  <th>Source</th>
                  <th>Created</th>
                  <th>Limits</th>
                  <th>Budget use</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  // A name may have a revoked key beside its active one (listed after it): one row each.
                  <tr key={`${k.source}:${k.name}:${k.createdAt ?? ""}`} data-key={k.name} data-revoked={k.revokedAt ? "" : undefined}>
                    <td class="mono key-name">
                      {k.name}
                      {/* SPEC 9.4: a prefix only, so a pasted secret can be matched to its key (try18 D4); "—" for a key stored before prefixes were kept */}
                      <div class="key-prefix muted small" title={k.prefix ? "The secret's first characters; the rest is never shown" : "Not known: the key was stored before prefixes were kept (or its secret is too short to show any)"}>
                        {k.prefix ? `${k.prefix}…` : "—"}
                      </div>
                    </td>
                    <td data-label="Scopes">{k.scopes.length ? k.scopes.join(", ") : <span class="muted">client</span>}</td>
                    {/* a short tag stays whole: the column, squeezed at 1280 px, drew "intern" as "inter" / "n" (try18 D5); a long one still breaks */}
                    <td data-label="Tag">{k.tag ? <span class={k.tag.length <= SHORT_TAG ? "nowrap" : undefined}>{k.tag}</span> : "–"}</td>
                    <td data-label="Source">{k.source === "config" ? "config file" : "database"}</td>
                    <td data-label="Created">{k.createdAt ? clock(k.createdAt) : "–"}</td>
                    <td class="small" data-label="Limits">
                      {limitsText(k.limits)}
                      <MinuteUseLine m={k.use?.minute} />
                      {k.use && k.use.inFlight > 0 ? <div class="muted">{k.use.inFlight} in flight</div> : null}
                    </td>
                    <td class="budgets" data-label="Budget use">
                      {k.use?.budgets.length ? k.use.budgets.map((b) => <BudgetBar key={`${b.budget.window}`} b={b} now={now} />) : <span class="muted small">–</span>}
                      <UnpricedBudgetNote k={k} />
                    </td>
                    <td data-label="State">
                      <KeyStatePill k={k} now={now} />
                      <KeyRotationNote k={k} now={now} />
                    </td>
                    <td class="key-actions">
                      {k.source === "db" && !k.revokedAt ? (
                        <span class="row-actions">
                          <EditLimits k={k} saved={keys.reload} />
                          <RotateButton
                            name={k.name}
                            rotated={(r) => {
                              setRotated(r);
                              keys.reload();
                            }}
                          />
                          <DisableButton name={k.name} disabled={k.disabledAt !== undefined} done={keys.reload} noted={setSwitchNote} />
                          <RevokeButton name={k.name} done={keys.reload} noted={setSwitchNote} />
                        </span>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}
