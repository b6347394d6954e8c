/**
 * Finding a call on the Calls page (calls.tsx; try18 D6, D7, D12): by the id a developer reports (its
 * reply's `X-Request-Id`, `req_…`, or `X-Switchyard-Route-Id`, `sy_…`) whatever page it is on, through
 * `GET /admin/api/calls?id=`; by keyboard (a row's time is a button; the opened trace takes the focus,
 * Escape or Close gives it back to the row); and by filters that suggest the names they match exactly
 * (keys, accounts and models this gateway knows) and, when nothing matches, say which filter found
 * nothing.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import type { AccountsStatus, Alias, CallRow, Combo, KeyInfo, Provider } from "../types.ts";

/** The id a call's row and trace go by: its route id, else (a call refused before routing has none) its request id. */
export const callIdOf = (c: CallRow): string => c.routeId ?? c.requestId;

/** Whether `id` names this call: its route id or its request id. */
export const isCall = (c: CallRow, id: string | undefined): boolean => id !== undefined && (c.routeId === id || c.requestId === id);

/** What {@link useCallById} found for an id no listed row is. */
export interface CallLookup {
  /** The call, when one with that id is kept. */
  call?: CallRow;
  /** The API answered and no call with that id is kept. */
  missing?: boolean;
  /** The API could not be asked (its message). */
  error?: string;
}

/**
 * The call `id` names, read with `GET /calls?id=` (either id, any age; the route id while its trace is
 * kept) when `wanted` (an id is in the address and no listed row is that call). One request per id: an
 * answer is kept while the id stays, so a live list refreshing under it asks again only after the id
 * was listed and left the page.
 */
export function useCallById(id: string | undefined, wanted: boolean): CallLookup {
  const [found, setFound] = useState<CallLookup & { id?: string }>({});
  const asked = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!wanted || id === undefined) {
      if (!wanted) asked.current = undefined;
      return;
    }
    if (asked.current === id) return;
    asked.current = id;
    api<{ calls: CallRow[] }>(`/calls${qs({ id, limit: 1 })}`)
      .then((a) => asked.current === id && setFound({ id, call: a.calls[0], missing: a.calls.length === 0 }))
      .catch((e: unknown) => asked.current === id && setFound({ id, error: e instanceof Error ? e.message : String(e) }));
  }, [id, wanted]);
  return wanted && found.id === id ? found : {};
}

/** The settings the "not kept" sentence names (`GET /settings`). */
export interface KeptSettings {
  trace_ring_size?: number;
  usage_retention_days?: number;
}

/** "No call with id … is kept (traces are kept for the newest 10,000 calls …)": an id that opened nothing. */
export function NoSuchCall({ id, settings }: { id: string; settings?: KeptSettings }) {
  const ring = (settings?.trace_ring_size ?? 10_000).toLocaleString("en-US");
  const days = settings?.usage_retention_days;
  return (
    <p class="call-missing" role="status">
      No call with id <code>{id}</code> is kept (traces are kept for the newest {ring} calls, <code>settings.trace_ring_size</code>
      {days ? <>; calls for {days} days, <code>settings.usage_retention_days</code></> : ""}). An id is a reply's <code>X-Request-Id</code> (
      <code>req_…</code>) or <code>X-Switchyard-Route-Id</code> (<code>sy_…</code>).
    </p>
  );
}

/**
 * The id search field: paste a call's request id or route id, Enter opens it (`open`, which puts it in
 * the address). `value`: the id the page opened from the address, shown in the field.
 */
export function CallIdSearch({ value, open }: { value?: string; open: (id: string) => void }) {
  return (
    <form
      class="form-row call-id-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        const id = (new FormData(e.currentTarget).get("id") ?? "").toString().trim();
        if (id) open(id);
      }}
    >
      <div class="field">
        <label for="call-id">Call id</label>
        <input id="call-id" name="id" placeholder="req_… or sy_…" defaultValue={value} autoComplete="off" spellcheck={false} title="A reply's X-Request-Id or X-Switchyard-Route-Id; Enter opens its trace" />
      </div>
    </form>
  );
}

/**
 * Moves the focus to the opened trace's heading (`.trace .trace-id`) whenever another call's trace is
 * shown, so a keyboard user reads it next; Escape inside the trace calls `close`.
 */
export function useTraceFocus(shown: string | undefined, close: () => void): void {
  const closer = useRef(close);
  closer.current = close;
  useEffect(() => {
    if (shown !== undefined) document.querySelector<HTMLElement>(".trace .trace-id")?.focus({ preventScroll: true });
  }, [shown]);
  useEffect(() => {
    if (shown === undefined) return;
    const on = (e: KeyboardEvent) => {
      if (e.key === "Escape" && document.activeElement?.closest(".trace")) {
        e.preventDefault();
        closer.current();
      }
    };
    addEventListener("keydown", on);
    return () => removeEventListener("keydown", on);
  }, [shown]);
}

/** Gives the focus back to `call`'s row (its time button), or to the id field when the call is not listed. */
export function focusRowOf(call: CallRow): void {
  const row = document.querySelector<HTMLElement>(`tr[data-route-id="${CSS.escape(callIdOf(call))}"] .call-open`);
  (row ?? document.getElementById("call-id"))?.focus();
}

/** Names the filters can pick from: every key, account and model this gateway knows, sorted. */
export interface KnownNames {
  keys: string[];
  accounts: string[];
  models: string[];
}

/** The answer, or undefined when the admin API could not give it (an older server, a 404). */
const maybe = <T,>(p: Promise<T>): Promise<T | undefined> => p.catch(() => undefined);

/**
 * The filters' suggestions: keys (`GET /keys`, revoked ones too: their calls are kept), accounts
 * (`GET /accounts`), models (aliases and combos with the models they point at, and each provider's
 * `provider/model`, as the Routing page's dry run offers them), with the names the listed `rows` carry
 * added.
 */
export function useKnownNames(rows: CallRow[]): KnownNames {
  const [known, setKnown] = useState<KnownNames>({ keys: [], accounts: [], models: [] });
  useEffect(() => {
    Promise.all([
      maybe(api<{ keys: KeyInfo[] }>("/keys")),
      maybe(api<AccountsStatus>("/accounts")),
      maybe(api<{ providers: Provider[] }>("/providers")),
      maybe(api<{ combos: Combo[] }>("/combos")),
      maybe(api<{ aliases: Alias[] }>("/aliases")),
    ]).then(([keys, accounts, providers, combos, aliases]) =>
      setKnown({
        keys: (keys?.keys ?? []).map((k) => k.name),
        accounts: (accounts?.accounts ?? []).map((a) => a.id),
        models: [
          ...(aliases?.aliases ?? []).flatMap((a) => [a.name, a.target]),
          ...(combos?.combos ?? []).flatMap((c) => [c.name, ...c.targets.map((t) => t.model)]),
          ...(providers?.providers ?? []).flatMap((p) => [...Object.keys(p.models ?? {}), ...(p.discoveredModels ?? [])].map((m) => `${p.id}/${m}`)),
        ],
      }),
    );
  }, []);
  const sorted = (names: Array<string | undefined>) => [...new Set(names.filter((n): n is string => !!n))].sort();
  return {
    keys: sorted([...known.keys, ...rows.map((c) => c.keyName)]),
    accounts: sorted([...known.accounts, ...rows.map((c) => c.accountId)]),
    models: sorted([...known.models, ...rows.flatMap((c) => [c.requestedModel, c.providerId ? `${c.providerId}/${c.model}` : undefined])]),
  };
}

/** The datalists the Model, Account and Key filters suggest from (`list="calls-models"` …). */
export function FilterLists({ known }: { known: KnownNames }) {
  const list = (id: string, names: string[]) => (
    <datalist id={id}>
      {names.map((n) => (
        <option key={n} value={n} />
      ))}
    </datalist>
  );
  return (
    <>
      {list("calls-models", known.models)}
      {list("calls-accounts", known.accounts)}
      {list("calls-keys", known.keys)}
    </>
  );
}

/**
 * An input handler applying a filter as soon as a suggestion is picked from its list (the browser
 * fires `input` with `insertReplacementText` for it, and `change` only on leaving the field); typed
 * text still applies on Enter or on leaving the field.
 */
export function onPick(apply: (e: Event) => void): (e: Event) => void {
  return (e: Event) => {
    if (!(e instanceof InputEvent) || e.inputType === "insertReplacementText") apply(e);
  };
}

/** The filters as the page keeps them. */
type FilterValues = { model: string; account: string; key: string; outcome: string; transport: string; instance: string };

const FILTER_WORDS: Record<keyof FilterValues, string> = { model: "model", account: "account", key: "key", outcome: "outcome", transport: "transport", instance: "instance" };

/**
 * Under "No call matches these filters": which filter found nothing. Each set filter is asked alone
 * (`GET /calls?limit=1&key=…`); one that matches no call is named, with the names its list offers
 * when the value is none of them (filters match whole names: `ali` is not `alice`); when each matches
 * calls alone, the page says it is their combination.
 */
export function EmptyFilterNote({ filters, known }: { filters: FilterValues; known: KnownNames }) {
  const set = (Object.keys(FILTER_WORDS) as Array<keyof FilterValues>).filter((k) => filters[k] !== "");
  const query = set.map((k) => `${k}=${filters[k]}`).join("&");
  const [alone, setAlone] = useState<{ query: string; none: Array<keyof FilterValues> } | undefined>();
  useEffect(() => {
    if (set.length === 0) return;
    let current = true;
    Promise.all(set.map((k) => api<{ calls: CallRow[] }>(`/calls${qs({ limit: 1, [k]: filters[k] })}`).then((a) => a.calls.length === 0, () => false)))
      .then((empty) => current && setAlone({ query, none: set.filter((_, i) => empty[i]) }));
    return () => {
      current = false;
    };
  }, [query]);
  if (!alone || alone.query !== query) return null;
  if (alone.none.length === 0) {
    return set.length > 1 ? <p class="muted filter-note">Each filter alone matches calls; none matches all of them together.</p> : null;
  }
  const lists: Partial<Record<keyof FilterValues, string[]>> = { model: known.models, account: known.accounts, key: known.keys };
  return (
    <div class="filter-note">
      {alone.none.map((k) => {
        const names = lists[k];
        const unknown = names !== undefined && names.length > 0 && !names.includes(filters[k]);
        return (
          <p key={k} class="muted" data-filter={k}>
            No call has the {FILTER_WORDS[k]} <code>{filters[k]}</code>
            {unknown
              ? `: a filter matches a whole name, and this gateway has no ${FILTER_WORDS[k]} of that name (${names.slice(0, 8).join(", ")}${names.length > 8 ? ", …" : ""}; the field lists them all).`
              : "."}
          </p>
        );
      })}
    </div>
  );
}
