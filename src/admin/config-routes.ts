/**
 * Admin routes that change the configuration (SPEC 2.3, 9.3), mounted through AdminDeps.extend:
 *
 * - `GET|POST /combos`, `GET|PUT|DELETE /combos/{name}`; `GET|POST /aliases`, `PUT|DELETE
 *   /aliases/{name}`: objects created here live in the database (store role RoutingObjectStore) next to
 *   the file's, are validated by the file's own loader together with the file and the other stored
 *   objects (src/config/compose.ts: same rules, same messages, paths inside the object), are used by
 *   the next request and listed by `/v1/models`. The file's objects are listed with `source: "config"`
 *   and are read-only here: changing one is a 409 naming the file.
 * - `GET /settings`, `PATCH /settings`: the settings block in force, who set each key; a PATCH stores
 *   top-level keys the file does not write (a key the file writes is a 409 naming the file).
 * - `POST /accounts/{id}/disable|enable`: takes effect for the next request, kept in the database.
 * - `POST /config/reload`: re-reads the file; the answer says what changed or why it was rejected, and
 *   which changed settings wait for a restart (the address, the database: src/config/restart-only.ts).
 */
import { isObj } from "../../formats/json.ts";
import type { Elysia } from "elysia";
import * as v from "valibot";
import type { Account, Clock } from "../../pipeline/ports.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { StoredObjects } from "../config/compose.ts";
import { webhookUrlShown } from "../show-url.ts";
import { ConfigError, issueText, type ConfigIssue } from "../config/errors.ts";
import type { LiveConfig } from "../config/live.ts";
import type { RestartNeeded } from "../config/restart-only.ts";
import { parseYaml } from "../config/load.ts";
import { lookalikeClause, lookalikeOf } from "../config/lookalike-names.ts";
import { ComboSchema, SettingsSchema } from "../config/schema.ts";
import type { Combo, RuntimeConfig } from "../config/types.ts";
import type { EventBus } from "../events/bus.ts";
import type { Store } from "../store/types.ts";
import { accountQueue, ConfigWriter, RELOAD_QUEUES } from "./config-writer.ts";
import { adminError, implicitAccountError, parseInput, readJson, strictBody } from "./replies.ts";

/** What the configuration routes read and change. */
export interface ConfigRoutesDeps {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  live: LiveConfig;
  store: Pick<Store, "putCombo" | "createCombo" | "deleteCombo" | "putAlias" | "createAlias" | "deleteAlias" | "setSetting" | "setAccountDisabled" | "setAccountDisabledFlag">;
  registry: Pick<AccountRegistry, "find">;
  /** Re-reads accounts into the live registry (after disable/enable). */
  refreshAccounts: () => Promise<void>;
  bus: EventBus;
  clock: Clock;
  /**
   * The changed settings of `next` that take effect only when the instance restarts (src/config/restart-only.ts),
   * for the reload's answer.
   */
  restartNeeded: (next: RuntimeConfig) => RestartNeeded[];
  /**
   * Where the other instances on a shared store enforce other values of the shared configuration
   * (src/shared-config.ts), checked again with the file just read: warnings of the reload's answer.
   */
  sharedConfigWarnings?: () => Promise<Array<{ path: string; message: string }>>;
  /** Runs the combo, alias and settings changes one at a time (its `routing` queue), account disable/enable in the account's own queue and `POST /config/reload` in the `keys`, `routing` and `accounts` queues together (src/admin/config-writer.ts), shared with the key and account routes; a writer of its own when not given. */
  writer?: ConfigWriter;
}

/** A combo as the admin API lists it: the config file's shape with defaults filled, and where it comes from. */
export function comboView(c: Combo): Record<string, unknown> {
  return {
    name: c.name,
    strategy: c.strategy,
    portability: c.portability,
    cache_affinity: c.cacheAffinity,
    targets: c.targets.map((t) => ({
      model: t.model,
      ...(t.account !== undefined ? { account: t.account } : {}),
      weight: t.weight,
      ...(t.params !== undefined ? { params: t.params } : {}),
      ...(t.when !== undefined ? { when: { expr: t.when.expr, when_unknown: t.when.whenUnknown } } : {}),
    })),
    source: c.source,
    active: true,
  };
}

const fileName = (cfg: RuntimeConfig) => cfg.source.path ?? "the configuration file";

/**
 * Issues of a refused object as one 400: the first names the field (once: a loader message that
 * already starts with it, "strategy must be …", is not prefixed again), all are listed.
 */
function invalid(issues: ConfigIssue[], paramOf: (i: ConfigIssue) => string | null): Response {
  const first = issues[0];
  const param = paramOf(first);
  const lead = param && !first.message.startsWith(`${param} `) ? `${param}: ` : "";
  return adminError(400, `${lead}${first.message}`, param, "invalid_object", { issues: issues.map((i) => ({ param: paramOf(i), message: i.message })) });
}

const rootless = (path: string) => (path === "(root)" ? null : path);

/**
 * Validates stored objects as they would be after a change: the change is refused when the changed
 * object is left out, or when another stored object that loads today would be left out after it.
 */
function check(
  live: LiveConfig,
  next: StoredObjects,
  subject: Subject,
): { ok: true; cfg: RuntimeConfig } | { ok: false; subject: Subject; own?: ConfigIssue[]; broken?: Broken[]; fileError?: ConfigError } {
  const before = new Set((live.current().stored?.rejected ?? []).map((r) => `${r.kind}:${r.name}`));
  let cfg: RuntimeConfig;
  try {
    cfg = live.composeWith(next);
  } catch (e) {
    if (e instanceof ConfigError) return { ok: false, subject, fileError: e };
    throw e;
  }
  const rejected = cfg.stored?.rejected ?? [];
  const own = rejected.filter((r) => r.kind === subject.kind && subject.names.includes(r.name) && r.why === "invalid").flatMap((r) => r.issues);
  if (own.length > 0) return { ok: false, subject, own };
  const broken = rejected.filter((r) => r.why === "invalid" && !before.has(`${r.kind}:${r.name}`) && !(r.kind === subject.kind && subject.names.includes(r.name)));
  if (broken.length > 0) return { ok: false, subject, broken: broken.map((r) => ({ kind: r.kind, name: r.name, issue: r.issues[0] })) };
  return { ok: true, cfg };
}

/** What a change is about: the changed objects, and whether it deletes them. */
interface Subject {
  kind: "combo" | "alias" | "setting";
  names: string[];
  deleted?: boolean;
}

/** A stored object that loads today and would not after a change, with the loader's first issue about it. */
interface Broken {
  kind: "combo" | "alias" | "setting";
  name: string;
  issue?: ConfigIssue;
}

/** `alias myrr`, `aliases a, b and combo x`: the stored objects named by kind. */
function dependents(broken: Broken[]): string {
  const byKind = new Map<string, string[]>();
  for (const b of broken) byKind.set(b.kind, [...(byKind.get(b.kind) ?? []), b.name]);
  const kinds = [...byKind].map(([kind, names]) => `${names.length > 1 ? (kind === "alias" ? "aliases" : `${kind}s`) : kind} ${names.join(", ")}`);
  return kinds.length > 1 ? `${kinds.slice(0, -1).join(", ")} and ${kinds.at(-1)}` : kinds[0]!;
}

/**
 * The 409 of a change that would break other stored objects. Deleting an object others use is said in
 * one sentence (`Combo rr is used by stored alias myrr: point myrr elsewhere or delete it first.`);
 * for another change, each dependent with the loader's reason (its field path unless the reason is
 * about the object as a whole; newuser13's tryout, J8: it read "((root): … did you mean "myrr"?; write
 * e.g. "openai/rr")", a suggestion to point the alias at itself).
 */
function breaksDependents(subject: Subject, broken: Broken[]): Response {
  if (subject.deleted && (subject.kind === "combo" || subject.kind === "alias")) {
    const what = `${subject.kind === "combo" ? "Combo" : "Alias"} ${subject.names.join(", ")}`;
    const only = broken[0]!;
    const fix = broken.length > 1 ? "change them or delete them first" : only.kind === "combo" ? `change ${only.name}'s targets or delete it first` : `point ${only.name} elsewhere or delete it first`;
    return adminError(409, `${what} is used by stored ${dependents(broken)}: ${fix}.`, null, "breaks_dependents");
  }
  const each = broken.map((b) => {
    const path = b.issue ? rootless(b.issue.path) : null;
    return `${b.kind} "${b.name}" (${path ? `${path}: ` : ""}${b.issue?.message ?? "it would no longer load"})`;
  });
  return adminError(409, `This change would break stored ${each.join("; ")}.`, null, "breaks_dependents");
}

function refused(r: { subject: Subject; own?: ConfigIssue[]; broken?: Broken[]; fileError?: ConfigError }, paramOf: (i: ConfigIssue) => string | null): Response {
  if (r.own) return invalid(r.own, paramOf);
  if (r.broken) return breaksDependents(r.subject, r.broken);
  return adminError(409, `The config file is invalid right now (${r.fileError?.issues[0]?.path}: ${r.fileError?.issues[0]?.message}); fix it first.`, null, "config_invalid");
}

/** Body of `POST /aliases`. */
const aliasTarget = v.pipe(v.string("target must be a string"), v.minLength(1, "target must not be empty"), v.description("provider/model, a combo or another alias"));
export const AliasCreate = strictBody({
  name: v.pipe(v.string("name must be a string"), v.minLength(1, "name must not be empty")),
  target: aliasTarget,
}, "an alias");
/** Body of `PUT /aliases/{name}`. */
export const AliasUpdate = strictBody({
  name: v.optional(v.string("name must be a string")),
  target: aliasTarget,
}, "an alias");
/** A body that must carry a combo name (the rest is validated by the config loader). */
const ComboName = v.looseObject({ name: v.pipe(v.string("name must be a string"), v.minLength(1, "name must not be empty")) }, (issue) =>
  // a missing name reads "name: required", as every other body's missing field does (strictBody)
  issue.input === undefined && issue.expected?.startsWith('"') ? "required" : "a combo must be a JSON object",
);
const ComboNameOptional = v.looseObject({ name: v.optional(v.string("name must be a string")) });
/** `PATCH /settings`: top-level settings keys (validated by the config loader); null removes a stored value. */
const SettingsPatch = v.record(v.string(), v.unknown());

/** The alias field a loader issue is about. */
const aliasParam = (i: ConfigIssue) => (/alias name|same name/.test(i.message) ? "name" : "target");

/** The effective settings block (file shape, defaults filled) and who set each top-level key. */
export function settingsView(live: LiveConfig): Record<string, unknown> {
  const cfg = live.current();
  const fileDoc = live.path ? parseYaml(readTextOf(live), live.path) : {};
  const fileSettings = isObj(fileDoc) && isObj(fileDoc.settings) ? fileDoc.settings : {};
  const stored = live.storedObjects().settings;
  const active = cfg.stored?.settings ?? new Set<string>();
  const merged: Record<string, unknown> = { ...Object.fromEntries([...active].map((k) => [k, stored[k]])), ...fileSettings };
  const parsed = v.safeParse(SettingsSchema, merged);
  const settings = parsed.success ? ({ ...parsed.output } as Record<string, unknown>) : merged;
  // A webhook URL written inline may carry a token: its host and path are shown, userinfo, query and
  // token-shaped path segments are not (webhookUrlShown).
  const alerts = settings.alerts as { webhook?: string } | undefined;
  if (alerts?.webhook) settings.alerts = { ...alerts, webhook: webhookUrlShown(alerts.webhook) };
  const sources: Record<string, "config" | "db" | "default"> = {};
  for (const k of Object.keys(SettingsSchema.pipe[1].entries)) sources[k] = k in fileSettings ? "config" : active.has(k) ? "db" : "default";
  return { settings, sources, file: cfg.source.path ?? null };
}

const readTextOf = (live: LiveConfig) => live.fileText();

/** Adds the configuration routes to the admin app (use inside AdminDeps.extend). */
export function configRoutes(deps: ConfigRoutesDeps): (app: Elysia<"/admin/api">) => Elysia<"/admin/api"> {
  const { live } = deps;
  const cfg = () => live.current();
  const writer = deps.writer ?? new ConfigWriter();

  const readObject = async (request: Request) => {
    const raw = await readJson(request, deps.bodyTimeoutMs?.());
    if (!raw.ok) return raw;
    if (!isObj(raw.value)) return { ok: false as const, response: adminError(400, "The request body must be a JSON object.") };
    return { ok: true as const, value: raw.value };
  };

  const listCombos = () => {
    const c = cfg();
    const out = [...c.combos.values()].map(comboView);
    for (const r of c.stored?.rejected ?? []) {
      if (r.kind !== "combo") continue;
      const s = live.storedObjects().combos.find((x) => x.name === r.name);
      if (s) out.push({ ...s.spec, name: s.name, source: "db", active: false, error: r.why === "shadowed" ? `shadowed by the combo or alias "${r.name}" of ${fileName(c)}` : r.issues.map((i) => `${i.path}: ${i.message}`).join("; ") });
    }
    return out;
  };
  const listAliases = () => {
    const c = cfg();
    const dbAliases = c.stored?.aliases ?? new Set<string>();
    const out: Array<Record<string, unknown>> = [...c.aliases].map(([name, target]) => ({ name, target, source: dbAliases.has(name) ? "db" : "config", active: true }));
    for (const r of c.stored?.rejected ?? []) {
      if (r.kind !== "alias") continue;
      const s = live.storedObjects().aliases.find((x) => x.name === r.name);
      if (s) out.push({ name: s.name, target: s.target, source: "db", active: false, error: r.why === "shadowed" ? `shadowed by the combo or alias "${r.name}" of ${fileName(c)}` : r.issues.map((i) => i.message).join("; ") });
    }
    return out;
  };
  /** Where a name is taken: the file's combo or alias, or a stored one. */
  const owner = (name: string): "file" | "db-combo" | "db-alias" | undefined => {
    const c = cfg();
    const stored = live.storedObjects();
    if (stored.combos.some((x) => x.name === name)) return "db-combo";
    if (stored.aliases.some((x) => x.name === name)) return "db-alias";
    if (c.combos.has(name) || c.aliases.has(name)) return "file";
    return undefined;
  };
  /**
   * The 409 of a create the store refused: another instance sharing the store created the name, or one
   * that reads as it (src/config/lookalike-names.ts), since this instance last read the stored objects.
   */
  const takenMeanwhile = async (name: string) => {
    await live.refreshStored();
    const taken = owner(name);
    if (!taken) {
      const twin = nameTaken(name);
      if (twin) return twin;
    }
    return adminError(409, `${taken === "db-alias" ? "An alias" : taken === "db-combo" ? "A combo" : "A combo or alias"} named "${name}" was created meanwhile; change it with PUT.`, "name", "conflict");
  };
  const readOnly = (kind: string, name: string) => adminError(409, `${kind} "${name}" comes from the config file ${fileName(cfg())}; change it there.`, "name", "read_only");
  /** The 409 of a create whose name is taken by the file's combo or alias or a stored one; undefined when it is free. */
  const nameTaken = (name: string): Response | undefined => {
    const taken = owner(name);
    if (taken === "file") return adminError(409, `The name "${name}" is taken by the config file ${fileName(cfg())}.`, "name", "conflict");
    if (taken) return adminError(409, `${taken === "db-combo" ? "A combo" : "An alias"} named "${name}" exists; change it with PUT.`, "name", "conflict");
    // Model names are matched exactly, but one a person cannot tell apart from another is refused (src/config/lookalike-names.ts).
    const c = cfg();
    const stored = live.storedObjects();
    const twin = lookalikeOf(name, [...c.combos.keys(), ...c.aliases.keys(), ...stored.combos.map((x) => x.name), ...stored.aliases.map((x) => x.name)]);
    if (!twin) return undefined;
    const where = owner(twin.name);
    const other = `${where === "db-alias" || (where === "file" && !c.combos.has(twin.name)) ? "the alias" : "the combo"} ${JSON.stringify(twin.name)}${where === "file" ? ` of the config file ${fileName(c)}` : ""}`;
    return adminError(409, `The name ${JSON.stringify(name)} ${lookalikeClause(twin.why, other)}: choose another name.`, "name", "conflict");
  };
  /**
   * Why a PUT or DELETE cannot change the stored `kind` `name`: it is the file's (409 read_only) or no
   * such one was stored through the admin API (404); undefined when it can.
   */
  const notStored = (kind: "combo" | "alias", name: string): Response | undefined => {
    const taken = owner(name);
    if (taken === "file") return readOnly(kind, name);
    if (taken !== `db-${kind}`) return adminError(404, `No ${kind} ${name} was created through the admin API.`, "name");
    return undefined;
  };
  /**
   * Stores a change of the database's combos, aliases or settings once the config loader accepts it:
   * `next` (the stored objects with the change) is composed with the file as a reload would; when it
   * loads, `write` stores the change and the stored objects are re-read. Returns the refusal (400
   * invalid_object, 409 breaks_dependents or config_invalid, `paramOf` naming the field), or the Response
   * `write` resolved to when it could not store (nothing is re-read then); undefined when the change is in force.
   */
  const storeChecked = async (next: StoredObjects, subject: Subject, paramOf: (i: ConfigIssue) => string | null, write: () => unknown): Promise<Response | undefined> => {
    const r = check(live, next, subject);
    if (!r.ok) return refused(r, paramOf);
    const lost = await write();
    if (lost instanceof Response) return lost;
    await live.refreshStored();
    return undefined;
  };
  const comboParam = (i: ConfigIssue) => rootless(i.path);

  const setDisabled = async (id: string, disabled: boolean): Promise<Response | { id: string; disabled: boolean }> => {
    const found = deps.registry.find(id);
    if (!found) return adminError(404, `No account ${id}.`, "id");
    if (found.implicit) return implicitAccountError(found.account);
    const account: Account = found.account;
    if (account.source === "config") {
      const inFile = cfg().accounts.find((a) => a.id === id);
      if (!disabled && inFile?.disabled) return adminError(409, `Account ${id} is disabled in the config file ${fileName(cfg())} (disabled: true); enable it there.`, "id", "read_only");
      await deps.store.setAccountDisabledFlag(id, disabled);
    } else {
      await deps.store.setAccountDisabled(id, disabled);
    }
    await deps.refreshAccounts();
    if (deps.bus.active) deps.bus.publish({ type: "account_state", at: deps.clock.now(), account: id, provider: account.providerId, change: disabled ? "disabled" : "enabled", reason: "through the admin API" });
    return { id, disabled };
  };

  /** `PATCH /settings` of top-level `keys` (values in `patch`, null removes), once the body is read: 409 for a key the file sets, else checked and stored as {@link storeChecked}. */
  const patchSettings = async (keys: string[], patch: Record<string, unknown>): Promise<unknown> => {
    const fileKeys = cfg().stored?.fileSettings ?? new Set<string>();
    const inFile = keys.find((k) => fileKeys.has(k));
    if (inFile) return adminError(409, `settings.${inFile} is set in the config file ${fileName(cfg())}; change it there.`, inFile, "read_only");
    const stored = live.storedObjects();
    const next: Record<string, unknown> = { ...stored.settings };
    for (const k of keys) {
      const value = patch[k];
      if (value === null) delete next[k];
      else next[k] = isObj(value) && isObj(next[k]) ? { ...(next[k] as object), ...value } : value;
    }
    const refusal = await storeChecked({ ...stored, settings: next }, { kind: "setting", names: keys }, (i) => rootless(i.path), async () => {
      for (const k of keys) await deps.store.setSetting(k, next[k] ?? null);
    });
    return refusal ?? settingsView(live);
  };

  /** `POST /config/reload`: re-reads the file; what changed, or the 400 saying why the file was refused (the running configuration stays). */
  const reload = async (): Promise<unknown> => {
    if (!live.path) return adminError(409, live.noFileToReload(), null, "no_config_file");
    const r = live.reloadFile();
    if (r.ok) {
      // a reload that found the file as last read says what that read changed (describe-changes.ts describeReload)
      const last = live.fileChangeBefore(r.changes);
      return { reloaded: true, file: live.path, changed: r.changes, ...(last ? { lastFileChange: last } : {}), restartNeeded: deps.restartNeeded(live.current()), warnings: [...r.warnings, ...((await deps.sharedConfigWarnings?.()) ?? [])] };
    }
    const issues = r.error.issues;
    return adminError(400, `Config reload rejected; the previous config stays in force: ${issues.map((i) => issueText(i, live.path)).join("; ")}`, rootless(issues[0]?.path ?? "(root)"), "config_invalid", { issues });
  };

  return (app) =>
    app
      // ---- combos --------------------------------------------------------------------------
      .get("/combos", () => ({ combos: listCombos() }))
      .get("/combos/:name", ({ params }) => {
        const found = listCombos().find((c) => c.name === params.name);
        return found ?? adminError(404, `No combo ${params.name}.`, "name");
      })
      .post(
        "/combos",
        async ({ request, set }) => {
          const body = await readObject(request);
          if (!body.ok) return body.response;
          const named = parseInput(ComboName, body.value);
          if (!named.ok) return named.response;
          const { source: _source, active: _active, error: _error, ...spec } = body.value;
          const name = named.value.name;
          return writer.run("routing", async () => {
            const taken = nameTaken(name);
            if (taken) return taken;
            const stored = live.storedObjects();
            const refusal = await storeChecked({ ...stored, combos: [...stored.combos, { name, spec, createdAt: 0, updatedAt: 0 }] }, { kind: "combo", names: [name] }, comboParam, async () =>
              // The check read this instance's memory: another instance sharing the store may have stored the name, or a look-alike, since.
              (await deps.store.createCombo(name, spec)) || takenMeanwhile(name),
            );
            if (refusal) return refusal;
            set.status = 201;
            return comboView(cfg().combos.get(name)!);
          });
        },
        { parse: "none" },
      )
      .put(
        "/combos/:name",
        async ({ params, request }) => {
          const name = params.name;
          const cannot = notStored("combo", name);
          if (cannot) return cannot;
          const body = await readObject(request);
          if (!body.ok) return body.response;
          const named = parseInput(ComboNameOptional, body.value);
          if (!named.ok) return named.response;
          if (named.value.name !== undefined && named.value.name !== name) return adminError(400, `name: the body names "${named.value.name}", the path "${name}" (a combo is not renamed).`, "name");
          const { source: _source, active: _active, error: _error, ...spec } = body.value;
          return writer.run("routing", async () => {
            const gone = notStored("combo", name); // deleted while the body arrived
            if (gone) return gone;
            const stored = live.storedObjects();
            const refusal = await storeChecked({ ...stored, combos: stored.combos.map((c) => (c.name === name ? { ...c, spec: { ...spec, name } } : c)) }, { kind: "combo", names: [name] }, comboParam, () =>
              deps.store.putCombo(name, { ...spec, name }),
            );
            if (refusal) return refusal;
            return comboView(cfg().combos.get(name)!);
          });
        },
        { parse: "none" },
      )
      .delete("/combos/:name", ({ params }) =>
        writer.run("routing", async () => {
          const name = params.name;
          const cannot = notStored("combo", name);
          if (cannot) return cannot;
          const stored = live.storedObjects();
          const refusal = await storeChecked({ ...stored, combos: stored.combos.filter((c) => c.name !== name) }, { kind: "combo", names: [name], deleted: true }, comboParam, () => deps.store.deleteCombo(name));
          return refusal ?? { deleted: name };
        }),
      )
      // ---- aliases -------------------------------------------------------------------------
      .get("/aliases", () => ({ aliases: listAliases() }))
      .post(
        "/aliases",
        async ({ request, set }) => {
          const raw = await readJson(request, deps.bodyTimeoutMs?.());
          if (!raw.ok) return raw.response;
          const body = parseInput(AliasCreate, raw.value);
          if (!body.ok) return body.response;
          const { name, target } = body.value;
          return writer.run("routing", async () => {
            const taken = nameTaken(name);
            if (taken) return taken;
            const stored = live.storedObjects();
            const refusal = await storeChecked({ ...stored, aliases: [...stored.aliases, { name, target, createdAt: 0, updatedAt: 0 }] }, { kind: "alias", names: [name] }, aliasParam, async () =>
              (await deps.store.createAlias(name, target)) || takenMeanwhile(name),
            );
            if (refusal) return refusal;
            set.status = 201;
            return { name, target, source: "db", active: true };
          });
        },
        { parse: "none" },
      )
      .put(
        "/aliases/:name",
        async ({ params, request }) => {
          const name = params.name;
          const cannot = notStored("alias", name);
          if (cannot) return cannot;
          const raw = await readJson(request, deps.bodyTimeoutMs?.());
          if (!raw.ok) return raw.response;
          const body = parseInput(AliasUpdate, raw.value);
          if (!body.ok) return body.response;
          if (body.value.name !== undefined && body.value.name !== name) return adminError(400, `name: the body names "${body.value.name}", the path "${name}" (an alias is not renamed).`, "name");
          const target = body.value.target;
          return writer.run("routing", async () => {
            const gone = notStored("alias", name); // deleted while the body arrived
            if (gone) return gone;
            const stored = live.storedObjects();
            const refusal = await storeChecked({ ...stored, aliases: stored.aliases.map((a) => (a.name === name ? { ...a, target } : a)) }, { kind: "alias", names: [name] }, aliasParam, () => deps.store.putAlias(name, target));
            return refusal ?? { name, target, source: "db", active: true };
          });
        },
        { parse: "none" },
      )
      .delete("/aliases/:name", ({ params }) =>
        writer.run("routing", async () => {
          const name = params.name;
          const cannot = notStored("alias", name);
          if (cannot) return cannot;
          const stored = live.storedObjects();
          const refusal = await storeChecked({ ...stored, aliases: stored.aliases.filter((a) => a.name !== name) }, { kind: "alias", names: [name], deleted: true }, aliasParam, () => deps.store.deleteAlias(name));
          return refusal ?? { deleted: name };
        }),
      )
      // ---- settings ------------------------------------------------------------------------
      .get("/settings", () => settingsView(live))
      .patch(
        "/settings",
        async ({ request }) => {
          const body = await readObject(request);
          if (!body.ok) return body.response;
          const patch = parseInput(SettingsPatch, body.value);
          if (!patch.ok) return patch.response;
          const keys = Object.keys(patch.value);
          if (keys.length === 0) return adminError(400, "The body names no settings key.");
          return writer.run("routing", () => patchSettings(keys, patch.value));
        },
        { parse: "none" },
      )
      // ---- accounts ------------------------------------------------------------------------
      // In the account's own queue only: not held back by a login or import of another account (config-writer.ts).
      .post("/accounts/:id/disable", ({ params }) => writer.run(accountQueue(params.id), () => setDisabled(params.id, true)))
      .post("/accounts/:id/enable", ({ params }) => writer.run(accountQueue(params.id), () => setDisabled(params.id, false)))
      // ---- reload --------------------------------------------------------------------------
      // After the changes whose checks read the file, and before the ones handed in after it (config-writer.ts).
      .post("/config/reload", () => writer.run(RELOAD_QUEUES, reload)) as never;
}

// ---- OpenAPI -------------------------------------------------------------------------------

const ComboReply = v.object({ ...ComboSchema.pipe[1].entries, source: v.picklist(["config", "db"]), active: v.boolean(), error: v.optional(v.string()) });
/** The body `PUT /combos/{name}` takes: a combo whose `name`, when given, is the path's (a combo is not renamed). */
const ComboPut = v.strictObject({
  ...ComboSchema.pipe[1].entries,
  name: v.optional(v.pipe(v.string(), v.description("The path's name, when given (a combo is not renamed: another name is a 400)."))),
});
const AliasReply = v.object({ name: v.string(), target: v.string(), source: v.picklist(["config", "db"]), active: v.boolean(), error: v.optional(v.string()) });
const SectionChanges = v.object({ added: v.array(v.string()), removed: v.array(v.string()), changed: v.array(v.string()) });
const SettingsReply = v.object({
  settings: SettingsSchema.pipe[1],
  sources: v.record(v.string(), v.picklist(["config", "db", "default"])),
  file: v.nullable(v.string()),
});

/** OpenAPI documentation of the configuration routes (merged into openapi.ts ADMIN_ROUTE_DOCS). */
export const CONFIG_ROUTE_DOCS = {
  "GET /admin/api/combos": { summary: "Combos: the config file's (source config, read-only) and the database's (source db).", response: v.object({ combos: v.array(ComboReply) }) },
  "POST /admin/api/combos": { summary: "Create a combo in the database (validated like the config file); used by the next request.", body: ComboSchema.pipe[1], response: { 201: ComboReply } },
  "GET /admin/api/combos/:name": { summary: "One combo.", response: ComboReply },
  "PUT /admin/api/combos/:name": { summary: "Replace a database combo (a config-file combo is a 409); the name is the path's.", body: ComboPut, response: ComboReply },
  "DELETE /admin/api/combos/:name": { summary: "Delete a database combo (a config-file combo is a 409).", response: v.object({ deleted: v.string() }) },
  "GET /admin/api/aliases": { summary: "Aliases: the config file's (source config, read-only) and the database's (source db).", response: v.object({ aliases: v.array(AliasReply) }) },
  "POST /admin/api/aliases": { summary: "Create an alias in the database; used by the next request.", body: AliasCreate, response: { 201: AliasReply } },
  "PUT /admin/api/aliases/:name": { summary: "Change a database alias's target (a config-file alias is a 409).", body: AliasUpdate, response: AliasReply },
  "DELETE /admin/api/aliases/:name": { summary: "Delete a database alias (a config-file alias is a 409).", response: v.object({ deleted: v.string() }) },
  "GET /admin/api/settings": { summary: "The settings block in force (defaults filled) and who set each key: config (read-only), db or default.", response: SettingsReply },
  "PATCH /admin/api/settings": {
    summary: "Store top-level settings keys the file does not set (null removes a stored value); validated like the file.",
    body: v.pipe(v.record(v.string(), v.unknown()), v.description("A partial settings block, e.g. {\"flight_recorder\": {\"enabled\": true}}.")),
    response: SettingsReply,
  },
  "POST /admin/api/accounts/:id/disable": { summary: "Disable an account from the next request on; kept across restarts (an implicit keyless account: 409).", response: v.object({ id: v.string(), disabled: v.boolean() }) },
  "POST /admin/api/accounts/:id/enable": { summary: "Enable an account disabled through the admin API (a file's disabled: true is a 409).", response: v.object({ id: v.string(), disabled: v.boolean() }) },
  "POST /admin/api/config/reload": {
    summary:
      "Re-read the config file: what changed (ids per section, settings and server keys), which changed settings take effect only when the gateway restarts (restartNeeded: server.host, server.port, server.database, by this reload or an earlier one, each with a sentence saying what holds until then), or why it was rejected (400, the old config stays).",
    response: v.object({
      reloaded: v.literal(true),
      file: v.string(),
      changed: v.object({
        providers: v.optional(SectionChanges),
        accounts: v.optional(SectionChanges),
        combos: v.optional(SectionChanges),
        aliases: v.optional(SectionChanges),
        keys: v.optional(SectionChanges),
        settings: v.optional(v.array(v.string())),
        server: v.optional(v.array(v.string())),
      }),
      lastFileChange: v.optional(
        v.pipe(
          v.object({ at: v.number(), changed: v.record(v.string(), v.unknown()) }),
          v.description("When nothing changed: the last re-read of the file that changed something (the instance re-reads it when it changes), ms since the epoch and its changes."),
        ),
      ),
      restartNeeded: v.array(v.object({ path: v.string(), message: v.string() })),
      warnings: v.array(v.object({ path: v.string(), message: v.string() })),
    }),
  },
};
