/**
 * `PATCH /admin/api/keys/{name}` (tryout finding D3): changes an active stored key's limits (SPEC 9.6:
 * rpm, tpm, concurrency, budgets, models), tag and scopes (SPEC 9.3: `admin`) without touching its
 * secret, identity or the use of its limits so far. Before, the only way was revoke and create again,
 * which handed the developer a new secret and started the key's budgets afresh. `switchyard keys set
 * NAME …` and the Keys page's "Edit limits" call it.
 *
 * The body: `{"limits": {"rpm": 5, "budgets": [{"window": "1d", "tokens": 2000}]}, "tag": "ci",
 * "scopes": ["admin"]}`. A field given replaces the key's, `null` clears it (`{"limits": {"rpm": null}}`:
 * no rpm limit; `"scopes": null` or `[]`: no admin scope), a field left out stays; `budgets` and `models`
 * are replaced as whole lists; `"limits": null` clears every limit. Each value follows `POST /keys`'s
 * rules (the config file's `keys[].limits`), with its messages.
 */
import * as v from "valibot";
import { strictObj } from "../config/errors.ts";
import { KEY_LIMIT_FIELDS } from "../config/schema.ts";
import type { KeyBudget } from "../../pipeline/ports.ts";
import { StoreError, type KeyChange, type KeyInfo } from "../store/types.ts";
import { configNamesakeNote, unknownProviderPattern, type AdminDeps } from "./admin-api.ts";
import { KeyScopes } from "./key-scopes.ts";
import { adminError, readBody, storeErrorStatus, strictBody } from "./replies.ts";

/** `limits` of the body: each field of `POST /keys`'s `limits`, or `null` to clear it. */
export const KeyLimitsChange = strictObj(
  {
    rpm: v.optional(v.nullable(KEY_LIMIT_FIELDS.rpm)),
    tpm: v.optional(v.nullable(KEY_LIMIT_FIELDS.tpm)),
    concurrency: v.optional(v.nullable(KEY_LIMIT_FIELDS.concurrency)),
    budgets: v.optional(v.nullable(KEY_LIMIT_FIELDS.budgets)),
    models: v.optional(v.nullable(KEY_LIMIT_FIELDS.modelsChange)),
  },
  "limits",
);

/** The body of `PATCH /keys/{name}` (an unknown field is a 400 naming it). */
export const KeyChangeBody = strictBody(
  {
    /** SPEC 9.6: the limits to change, each replaced, cleared with null, or kept when left out; null clears them all. */
    limits: v.optional(v.nullable(KeyLimitsChange)),
    /** The key's tag (the routing predicates' `key_tag`); null or "" removes it. */
    tag: v.optional(v.nullable(v.pipe(v.string("tag must be a string"), v.maxLength(128, "tag is at most 128 characters")))),
    /**
     * SPEC 9.3: the key's scopes, replaced (`["admin"]`: it may use the admin API and the dashboard);
     * null or [] removes them (its dashboard sessions end at their next request).
     */
    scopes: v.optional(v.nullable(KeyScopes)),
  },
  "a key change",
);

/** What the schema hands over as the store's change: budgets as `{window, tokens}` or `{window, usd}`, nothing undefined. */
function storeChange(input: v.InferOutput<typeof KeyChangeBody>): KeyChange {
  const out: KeyChange = {};
  if (input.tag !== undefined) out.tag = input.tag;
  if (input.scopes !== undefined) out.scopes = input.scopes;
  if (input.limits === null) out.limits = null;
  else if (input.limits !== undefined) {
    const l = input.limits;
    const limits: NonNullable<KeyChange["limits"]> = {};
    for (const k of ["rpm", "tpm", "concurrency"] as const) if (l[k] !== undefined) limits[k] = l[k];
    if (l.models !== undefined) limits.models = l.models;
    if (l.budgets !== undefined) limits.budgets = l.budgets === null ? null : l.budgets.map((b): KeyBudget => (b.tokens !== undefined ? { window: b.window, tokens: b.tokens } : { window: b.window, usd: b.usd! }));
    out.limits = limits;
  }
  return out;
}

/**
 * Handles `PATCH /keys/{name}`: answers `{key, note?}`, the key as `GET /keys` lists it now (its limits
 * with their use: budget use so far is kept, shown against the new budget; its scopes), or an error in the admin
 * shape: 400 for a bad value or an empty change, 404 for no key of that name, 409 for a revoked key (its
 * limits do not change: a new key of its name starts fresh) or a config-file key (changed in the file),
 * 503 while a shared store is away. The next request of the key is checked against the new limits and
 * scopes, on every instance of a shared store within about a second (the change is announced as a
 * revoke is). A budget lowered under what its window already used raises, before the answer, the
 * `quota_threshold` alerts it is now past (the share 1 when it is used up; src/alerts/budget-change-alerts.ts),
 * and the other instances of a shared store raise them as they re-read the key.
 */
export async function changeKey(deps: AdminDeps, name: string, request: Request): Promise<unknown> {
  const input = await readBody(request, KeyChangeBody, deps.bodyTimeoutMs?.());
  if (!input.ok) return input.response;
  if (input.value.limits === undefined && input.value.tag === undefined && input.value.scopes === undefined) {
    return adminError(400, 'Nothing to change: give "limits" (rpm, tpm, concurrency, budgets, models; null clears one), "tag" or "scopes".');
  }
  const models = input.value.limits?.models;
  const unknownProvider = models && deps.providerIds && unknownProviderPattern(models, [...deps.providerIds()]);
  if (unknownProvider) return adminError(400, unknownProvider.message, unknownProvider.param);
  // the change and the limits read before it, after the other key changes handed in before (the writer's `keys` queue, src/admin/config-writer.ts)
  const change = async (): Promise<unknown> => {
    let key: KeyInfo;
    // its limits before, for the alerts of a lowered budget (the active stored key is the one changed)
    const before = input.value.limits !== undefined && deps.keyLimitsChanged ? (await deps.store.listKeys()).find((k) => k.name === name && k.source === "db" && k.revokedAt === undefined) : undefined;
    try {
      key = await deps.store.updateKey(name, storeChange(input.value));
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      if (e.code === "not_found") {
        const revoked = (await deps.store.listKeys()).find((k) => k.name === name && k.source === "db" && k.revokedAt !== undefined);
        if (revoked) {
          return adminError(
            409,
            `Key ${name} was revoked at ${new Date(revoked.revokedAt!).toISOString()}: a revoked key's limits do not change. A new key of that name (switchyard keys create ${name}) gets a new secret, and its limits and budgets start fresh.`,
          );
        }
        return adminError(404, `No active key named ${name}: change the limits of an active stored key (switchyard keys list).`);
      }
      if (e.code === "read_only") return adminError(409, `${e.message}: a key of the config file has its limits changed in the file (keys[].limits, and a reload)`);
      if (e.code === "invalid") return adminError(400, e.message, "limits");
      return adminError(storeErrorStatus(e.code), e.message);
    }
    deps.keysChanged?.("changed", name);
    const { id, ...listed } = key;
    // a budget lowered under its window's use raises the thresholds it is now past (SPEC 9.7), before the answer
    if (before) await deps.keyLimitsChanged?.(id ?? key.name, before.limits, key.limits);
    // as GET /keys lists it (a USD budget with the requests of its window it could not count, try18 D17)
    const use = key.limits && deps.keyUse ? await deps.keyUse(id ?? key.name, key.limits) : undefined;
    const namesake = (await deps.store.listKeys()).some((k) => k.name === name && k.source === "config");
    return { key: { ...listed, ...(use ? { use } : {}) }, ...(namesake ? { note: configNamesakeNote(name, "changed") } : {}) };
  };
  return deps.writer ? deps.writer.run("keys", change) : change();
}
