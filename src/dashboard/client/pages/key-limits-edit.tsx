/**
 * Keys page: "Edit limits" on an active stored key's row (tryout finding D3: a key's limits could not
 * be changed once it was created; revoke and create again handed the developer a new secret and
 * started its budgets afresh). A small modal form prefilled with the key's limits — requests/min,
 * tokens/min, concurrent, its budgets (USD or tokens, each with its window), the model allow-list, the
 * tag and the admin scope (the create form's checkbox) — sends what changed as `PATCH
 * /admin/api/keys/{name}` (`switchyard keys set`): an emptied field clears that limit, the key keeps its
 * secret and the use of its limits so far.
 *
 * Keyboard: the form is a native modal `<dialog>` (the page behind it inert, Tab stays in it); it
 * opens with focus on its first field, Enter in a field saves, Escape or Cancel closes it, and focus
 * returns to the Edit limits button. A refusal is shown in the form, in its labels' words; a saved
 * change closes it, re-reads the row and is said through the live region ("Key ci: limits saved.").
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { announce } from "../announce.ts";
import type { KeyInfo, KeyLimits } from "../types.ts";

/** One budget row of the form, as typed. */
interface BudgetRow {
  amount: string;
  unit: "usd" | "tokens";
  window: string;
}

/** The form's fields, as typed (text, so an emptied field can be told from an untouched one). */
interface LimitsForm {
  rpm: string;
  tpm: string;
  concurrency: string;
  budgets: BudgetRow[];
  models: string;
  tag: string;
  /** The `admin` scope (SPEC 9.3: the admin API and the dashboard). */
  admin: boolean;
}

const WINDOWS = ["5h", "1d", "7d", "30d"] as const;

/** The form prefilled from a key as `GET /keys` lists it. */
export function formOf(k: Pick<KeyInfo, "limits" | "tag" | "scopes">): LimitsForm {
  const l = k.limits ?? {};
  const num = (n: number | undefined) => (n === undefined ? "" : String(n));
  return {
    rpm: num(l.rpm),
    tpm: num(l.tpm),
    concurrency: num(l.concurrency),
    budgets: (l.budgets ?? []).map((b) => (b.usd !== undefined ? { amount: String(b.usd), unit: "usd", window: b.window } : { amount: String(b.tokens ?? ""), unit: "tokens", window: b.window })),
    models: (l.models ?? []).join(", "),
    tag: k.tag ?? "",
    admin: (k.scopes ?? []).includes("admin"),
  };
}

/** The API's fields by the form's labels (a 400 names `limits.rpm`; the form says "Requests/min"). */
const LABELS: Array<[RegExp, string]> = [
  [/^limits\.rpm$/, "Requests/min"],
  [/^limits\.tpm$/, "Tokens/min"],
  [/^limits\.concurrency$/, "Concurrent"],
  [/^limits\.budgets(\[\d+\])?(\.\w+)?$/, "Budget"],
  [/^limits\.models(\[\d+\])?$/, "Models"],
  [/^tag$/, "Tag"],
  [/^scopes(\[\d+\])?$/, "Admin scope"],
];

/** A refusal in the form's words: the field's label instead of the API's path. */
function errorText(e: unknown): string {
  if (!(e instanceof ApiError) || !e.param) return (e as Error).message;
  const label = LABELS.find(([re]) => re.test(e.param!))?.[1];
  if (!label) return e.message;
  return `${label}: ${e.message.startsWith(`${e.param}: `) ? e.message.slice(e.param.length + 2) : e.message}`;
}

/**
 * The `PATCH /keys/{name}` body for what changed between `was` and `now` (an emptied field is `null`:
 * that limit cleared; the admin scope unticked is `scopes: null`), or a sentence saying why a field cannot be sent (a limit takes a plain whole
 * number, a USD budget an amount, a tokens budget a whole number; the server checks the rest). Empty
 * when nothing changed.
 */
export function changeOf(was: LimitsForm, now: LimitsForm): { body: { limits?: Record<string, unknown>; tag?: string | null; scopes?: string[] | null } } | { error: string } {
  const limits: Record<string, unknown> = {};
  for (const [k, label] of [["rpm", "Requests/min"], ["tpm", "Tokens/min"], ["concurrency", "Concurrent"]] as const) {
    const t = now[k].trim();
    if (t === was[k].trim()) continue;
    if (t !== "" && !/^\d+$/.test(t)) return { error: `${label} must be a whole number of at least 1, or empty for no limit; got ${t}` };
    limits[k] = t === "" ? null : Number(t);
  }
  const budgets: NonNullable<KeyLimits["budgets"]> = [];
  for (const b of now.budgets) {
    const t = b.amount.trim();
    if (t === "") continue; // an emptied amount drops that budget
    if (b.unit === "usd" && !/^(\d+\.?\d*|\.\d+)$/.test(t)) return { error: `Budget (USD) per ${b.window} must be an amount in dollars such as 2.50; got ${t}` };
    if (b.unit === "tokens" && !/^\d+$/.test(t)) return { error: `Budget (tokens) per ${b.window} must be a whole number; got ${t}` };
    budgets.push(b.unit === "usd" ? { window: b.window, usd: Number(t) } : { window: b.window, tokens: Number(t) });
  }
  const key = (rows: BudgetRow[]) => JSON.stringify(rows.filter((b) => b.amount.trim() !== "").map((b) => [b.window, b.unit, Number(b.amount.trim())]));
  if (key(now.budgets) !== key(was.budgets)) limits.budgets = budgets.length ? budgets : null;
  const list = (s: string) => [...new Set(s.split(",").map((m) => m.trim()).filter(Boolean))];
  if (list(now.models).join(",") !== list(was.models).join(",")) limits.models = list(now.models).length ? list(now.models) : null;
  const body: { limits?: Record<string, unknown>; tag?: string | null; scopes?: string[] | null } = {};
  if (Object.keys(limits).length) body.limits = limits;
  if (now.tag.trim() !== was.tag.trim()) body.tag = now.tag.trim() === "" ? null : now.tag.trim();
  if (now.admin !== was.admin) body.scopes = now.admin ? ["admin"] : null;
  return { body };
}

/** A labelled text field of the form. */
function Field({ id, label, value, set, hint, inputMode }: { id: string; label: string; value: string; set: (v: string) => void; hint?: string; inputMode?: "numeric" | "text" }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={id} class={inputMode === "numeric" ? "narrow" : undefined} value={value} inputMode={inputMode} placeholder={hint} autoComplete="off" onInput={(e) => set((e.target as HTMLInputElement).value)} />
    </div>
  );
}

/**
 * The row's Edit limits button and, while open, its form. `saved` is called once a change is stored
 * (the page re-reads the keys).
 */
export function EditLimits({ k, saved }: { k: KeyInfo; saved: () => void }) {
  const [form, setForm] = useState<LimitsForm | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const was = useRef<LimitsForm>(formOf(k));
  const open = form !== undefined;
  // A layout effect: the dialog is modal (and its first field focused) in the task that draws it.
  useLayoutEffect(() => {
    const d = dialog.current;
    if (open && d && !d.open) d.showModal();
  }, [open]);
  const close = () => {
    setForm(undefined);
    setError(undefined);
    // focus back where the user was (the dialog, drawn away, took it with it)
    requestAnimationFrame(() => opener.current?.focus());
  };
  const save = async () => {
    if (!form || busy) return;
    const change = changeOf(was.current, form);
    if ("error" in change) return setError(change.error);
    if (!change.body.limits && change.body.tag === undefined && change.body.scopes === undefined) return close();
    setBusy(true);
    setError(undefined);
    try {
      await api(`/keys/${encodeURIComponent(k.name)}`, { method: "PATCH", body: change.body });
      saved();
      close();
      announce(`Key ${k.name}: limits saved.`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const set = (patch: Partial<LimitsForm>) => setForm((f) => (f ? { ...f, ...patch } : f));
  const setBudget = (i: number, patch: Partial<BudgetRow>) => setForm((f) => (f ? { ...f, budgets: f.budgets.map((b, j) => (j === i ? { ...b, ...patch } : b)) } : f));
  return (
    <>
      <button
        ref={opener}
        type="button"
        class="btn btn-small"
        title="Change this key's limits, tag and admin scope; it keeps its secret and the use of its limits so far"
        onClick={() => {
          was.current = formOf(k);
          setError(undefined);
          setForm(formOf(k));
        }}
      >
        Edit limits
      </button>
      {form && (
        <dialog
          ref={dialog}
          class="key-limits-dialog"
          aria-labelledby={`limits-title-${k.name}`}
          onCancel={(e) => {
            // Escape: closed by the page, so that focus returns to the button
            e.preventDefault();
            close();
          }}
        >
          <form
            method="dialog"
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <h2 id={`limits-title-${k.name}`}>Limits of key {k.name}</h2>
            <p class="muted small">The key keeps its secret and what it used so far; an emptied field removes that limit. The next request is checked against what you save.</p>
            <div class="form-row">
              <Field id="edit-rpm" label="Requests/min" value={form.rpm} set={(rpm) => set({ rpm })} hint="no limit" inputMode="numeric" />
              <Field id="edit-tpm" label="Tokens/min" value={form.tpm} set={(tpm) => set({ tpm })} hint="no limit" inputMode="numeric" />
              <Field id="edit-concurrency" label="Concurrent" value={form.concurrency} set={(concurrency) => set({ concurrency })} hint="no limit" inputMode="numeric" />
            </div>
            <fieldset class="budget-rows">
              <legend>Budgets</legend>
              {form.budgets.length === 0 && <p class="muted small">none</p>}
              {form.budgets.map((b, i) => (
                <div class="form-row" key={i} data-budget={i}>
                  <input aria-label={`Budget ${i + 1} amount`} class="narrow" inputMode="decimal" value={b.amount} onInput={(e) => setBudget(i, { amount: (e.target as HTMLInputElement).value })} />
                  <select aria-label={`Budget ${i + 1} unit`} value={b.unit} onChange={(e) => setBudget(i, { unit: (e.target as HTMLSelectElement).value as BudgetRow["unit"] })}>
                    <option value="usd">USD</option>
                    <option value="tokens">tokens</option>
                  </select>
                  <select aria-label={`Budget ${i + 1} window`} value={b.window} onChange={(e) => setBudget(i, { window: (e.target as HTMLSelectElement).value })}>
                    {WINDOWS.map((w) => (
                      <option key={w} value={w}>
                        per {w}
                      </option>
                    ))}
                  </select>
                  <button type="button" class="btn btn-small" onClick={() => set({ budgets: form.budgets.filter((_, j) => j !== i) })}>
                    Remove
                  </button>
                </div>
              ))}
              <button type="button" class="btn btn-small" onClick={() => set({ budgets: [...form.budgets, { amount: "", unit: "usd", window: "1d" }] })}>
                Add budget
              </button>
            </fieldset>
            <div class="form-row">
              <Field id="edit-models" label="Models (comma-separated)" value={form.models} set={(models) => set({ models })} hint="every model" />
              <Field id="edit-tag" label="Tag" value={form.tag} set={(tag) => set({ tag })} hint="none" />
            </div>
            <label class="check">
              <input type="checkbox" id="edit-admin" name="edit-admin" checked={form.admin} onChange={(e) => set({ admin: (e.target as HTMLInputElement).checked })} /> admin scope (the admin API and this dashboard)
            </label>
            {error && (
              <p class="error-line" role="alert">
                {error}
              </p>
            )}
            <div class="form-row dialog-actions">
              <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy ? "true" : undefined}>
                {busy ? "Saving…" : "Save"}
              </button>
              <button type="button" class="btn" onClick={close}>
                Cancel
              </button>
            </div>
          </form>
        </dialog>
      )}
    </>
  );
}
