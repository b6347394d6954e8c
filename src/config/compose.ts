/**
 * The running configuration = the config file + the objects created through the admin API (SPEC 2.3,
 * 9.3): combos, aliases and settings stored in the database are added to the file's document and the
 * whole is validated by the same loader as the file alone (src/config/load.ts), so a stored object
 * obeys exactly the file's rules and error texts.
 *
 * Precedence: the file wins. A stored combo or alias whose name the file also uses is left out
 * (`shadowed`); a top-level key of the `settings` block that the file writes is the file's, and a
 * stored value for it is ignored. A stored object the loader refuses (a provider removed from the file,
 * a reference to a deleted alias, a cycle among stored objects) is left out too and reported in
 * `stored.rejected`, so a file edit never fails because of the database; the file's own problems
 * still reject the file.
 */
import { isObj } from "../../formats/json.ts";
import { dirname, resolve } from "node:path";
import { readFileSync } from "node:fs";
import type { StoredAlias, StoredCombo } from "../store/routing-objects.ts";
import { ConfigError, type ConfigIssue, cycleMessage, ROOT_PATH } from "./errors.ts";
import { addEnvAccounts, parseConfigDocument, parseYaml } from "./load.ts";
import { withLines } from "./duplicate-keys.ts";
import type { Env } from "./secrets.ts";
import type { Combo, RuntimeConfig } from "./types.ts";

/** The file part of the configuration: its text as last read, or none (the built-in default). */
export interface ConfigBase {
  /** Absolute path of the file; absent when running on the built-in default. */
  path?: string;
  /** The file's text ("" for the built-in default). */
  text: string;
}

/** The objects the admin API stored (store role `RoutingObjectStore`). */
export interface StoredObjects {
  combos: StoredCombo[];
  aliases: StoredAlias[];
  /** Top-level settings key → value, as written. */
  settings: Record<string, unknown>;
}

/** A stored object left out of the running configuration, and why. */
export interface RejectedObject {
  kind: "combo" | "alias" | "setting";
  name: string;
  /** `shadowed`: the file has an object of that name (or writes that settings key); else `invalid`. */
  why: "shadowed" | "invalid";
  /** The loader's issues, with paths inside the object (`targets[0].model`); empty when shadowed. */
  issues: ConfigIssue[];
}

/** Where the objects of a composed configuration come from (RuntimeConfig.stored). */
export interface StoredOrigin {
  /** Names of the combos and aliases that come from the database. */
  combos: Set<string>;
  aliases: Set<string>;
  /** Top-level settings keys the file writes (read-only through the admin API). */
  fileSettings: Set<string>;
  /** Top-level settings keys whose value comes from the database. */
  settings: Set<string>;
  rejected: RejectedObject[];
}

/**
 * Reads the config file (when there is one) for {@link composeConfig}.
 * @throws ConfigError at the root when the file cannot be read.
 */
export function readConfigBase(path: string | undefined): ConfigBase {
  if (!path) return { text: "" };
  const abs = resolve(path);
  try {
    return { path: abs, text: readFileSync(abs, "utf8") };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError([{ path: ROOT_PATH, message: `cannot read config file ${abs}: ${code === "ENOENT" ? "not found" : (code ?? "unreadable")}` }], abs);
  }
}

type Owner = { kind: "file" } | { kind: "combo" | "alias" | "setting"; name: string; rest: string };

/** Strips `prefix` and a following dot from an issue path. */
const inner = (path: string, prefix: string) => {
  const rest = path.slice(prefix.length);
  return rest.startsWith(".") ? rest.slice(1) : rest;
};

/**
 * Builds the running configuration from the file and the stored objects.
 * @param now clock for `source.loadedAt`
 * @param databaseFlag whether `--database` was given (load.ts `ParseOptions.databaseFlag`)
 * @throws ConfigError when the file itself is invalid (only the file's issues are listed).
 */
export function composeConfig(base: ConfigBase, stored: StoredObjects, env: Env, now: () => number = Date.now, databaseFlag = false): RuntimeConfig {
  const raw = base.path ? parseYaml(base.text, base.path) : {};
  const doc: Record<string, unknown> = isObj(raw) ? { ...raw } : {};
  const fileCombos: unknown[] = Array.isArray(doc.combos) ? doc.combos : [];
  const fileComboNames = new Set(fileCombos.map((c) => (isObj(c) ? c.name : undefined)).filter((n): n is string => typeof n === "string"));
  const fileAliases: Record<string, unknown> = isObj(doc.aliases) ? doc.aliases : {};
  const fileSettings: Record<string, unknown> = isObj(doc.settings) ? doc.settings : {};
  const fileNames = new Set([...fileComboNames, ...Object.keys(fileAliases)]);

  const rejected: RejectedObject[] = [];
  let combos = stored.combos.filter((c) => {
    if (!fileNames.has(c.name)) return true;
    rejected.push({ kind: "combo", name: c.name, why: "shadowed", issues: [] });
    return false;
  });
  let aliases = stored.aliases.filter((a) => {
    if (!fileNames.has(a.name)) return true;
    rejected.push({ kind: "alias", name: a.name, why: "shadowed", issues: [] });
    return false;
  });
  let settingKeys = Object.keys(stored.settings).filter((k) => {
    if (!(k in fileSettings)) return true;
    rejected.push({ kind: "setting", name: k, why: "shadowed", issues: [] });
    return false;
  });

  const ownerOf = (path: string): Owner => {
    const c = /^combos\[(\d+)\]/.exec(path);
    if (c) {
      const j = Number(c[1]) - fileCombos.length;
      return j >= 0 && j < combos.length ? { kind: "combo", name: combos[j].name, rest: inner(path, c[0]) } : { kind: "file" };
    }
    const a = /^aliases(?:\.([A-Za-z_$][\w$]*)|\[("(?:[^"\\]|\\.)*")\])/.exec(path);
    if (a) {
      const name = a[1] ?? (JSON.parse(a[2]) as string);
      return aliases.some((x) => x.name === name) ? { kind: "alias", name, rest: inner(path, a[0]) } : { kind: "file" };
    }
    const s = /^settings\.([A-Za-z_]\w*)/.exec(path);
    if (s && settingKeys.includes(s[1])) return { kind: "setting", name: s[1], rest: inner(path, "settings") };
    return { kind: "file" };
  };

  // Each round leaves out the stored objects the loader refused; a refused object may have been the
  // only reason another was refused (or referenced), so the loop re-validates until nothing changes.
  for (;;) {
    const composed: Record<string, unknown> = {
      ...doc,
      combos: [...fileCombos, ...combos.map((c) => ({ ...c.spec, name: c.name }))],
      aliases: { ...Object.fromEntries(aliases.map((a) => [a.name, a.target])), ...fileAliases },
      settings: { ...Object.fromEntries(settingKeys.map((k) => [k, stored.settings[k]])), ...fileSettings },
    };
    let cfg: RuntimeConfig;
    try {
      cfg = parseConfigDocument(composed, { env, path: base.path, baseDir: base.path ? dirname(base.path) : undefined, now, databaseFlag });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const byObject = new Map<string, { kind: "combo" | "alias" | "setting"; name: string; issues: ConfigIssue[] }>();
      const fileIssues: ConfigIssue[] = [];
      for (const issue of e.issues) {
        const o = ownerOf(issue.path);
        if (o.kind === "file") {
          fileIssues.push(issue);
          continue;
        }
        const k = `${o.kind}:${o.name}`;
        if (!byObject.has(k)) byObject.set(k, { kind: o.kind, name: o.name, issues: [] });
        byObject.get(k)!.issues.push({ ...issue, path: o.rest || ROOT_PATH });
      }
      // A cycle is reported once, at the reference that closes it: each other stored member is told the
      // cycle too (it was left out next round for referring to the one left out, "neither provider/model,
      // an alias nor a combo", which a PUT closing the cycle answered).
      for (const cycle of e.cycles) {
        cycle.members.forEach((m, i) => {
          if (m.path === cycle.path) return;
          const o = ownerOf(m.path);
          if (o.kind === "file") return;
          const k = `${o.kind}:${o.name}`;
          if (!byObject.has(k)) byObject.set(k, { kind: o.kind, name: o.name, issues: [] });
          byObject.get(k)!.issues.push({ path: o.rest || ROOT_PATH, message: cycleMessage(cycle.members, i) });
        });
      }
      if (byObject.size === 0) throw withLines(e, base.text);
      if (fileIssues.length > 0 && storedFree(doc, fileCombos, env, base, now, databaseFlag)) {
        // The file alone loads: its "issues" were caused by stored objects (reported at file paths);
        // drop the objects reported with them and retry.
      } else if (fileIssues.length > 0) {
        throw withLines(new ConfigError(fileIssues, base.path), base.text);
      }
      for (const r of byObject.values()) rejected.push({ ...r, why: "invalid" });
      combos = combos.filter((c) => !byObject.has(`combo:${c.name}`));
      aliases = aliases.filter((a) => !byObject.has(`alias:${a.name}`));
      settingKeys = settingKeys.filter((k) => !byObject.has(`setting:${k}`));
      continue;
    }
    if (!base.path) addEnvAccounts(cfg, env);
    // A warning about a stored combo (one after the file's in the composed list) names it, not its index.
    cfg.warnings = cfg.warnings.map((w) => {
      const o = ownerOf(w.path);
      return o.kind === "combo" ? { ...w, path: `combos.${o.name}${o.rest ? `.${o.rest}` : ""}` } : w;
    });
    const dbCombos = new Set(combos.map((c) => c.name));
    for (const name of dbCombos) {
      const c = cfg.combos.get(name);
      if (c) cfg.combos.set(name, { ...c, source: "db" } satisfies Combo);
    }
    cfg.stored = {
      combos: dbCombos,
      aliases: new Set(aliases.map((a) => a.name)),
      fileSettings: new Set(Object.keys(fileSettings)),
      settings: new Set(settingKeys),
      rejected,
    };
    cfg.warnings.push(...leftOutWarnings(rejected, base.path ?? "the configuration file"));
    return cfg;
  }
}

/** Whether the file's document loads without any stored object. */
function storedFree(doc: Record<string, unknown>, fileCombos: unknown[], env: Env, base: ConfigBase, now: () => number, databaseFlag: boolean): boolean {
  try {
    parseConfigDocument({ ...doc, combos: fileCombos }, { env, path: base.path, baseDir: base.path ? dirname(base.path) : undefined, now, databaseFlag });
    return true;
  } catch {
    return false;
  }
}

/**
 * A warning for each stored object the running configuration leaves out (a combo or alias whose name
 * the file now uses, a settings key the file now writes, one the file's edit broke): they go with the
 * file's own warnings to the start's log, a reload's answer and the dashboard's reload notice, as long as
 * it lasts. Until newuser13's tryout (J7) a reload said only "combos spread changed", and the admin
 * API's combo list alone said the stored one was out. Paths: `combos.NAME`, `aliases.NAME`, `settings.KEY`.
 */
function leftOutWarnings(rejected: readonly RejectedObject[], file: string): ConfigIssue[] {
  const plural = { combo: "combos", alias: "aliases", setting: "settings" } as const;
  return rejected.map((r) => ({
    path: `${plural[r.kind]}.${r.name}`,
    message:
      r.why === "shadowed"
        ? r.kind === "setting"
          ? `${file} writes settings.${r.name}, so the value stored through the admin API or the dashboard is ignored`
          : `the ${r.kind} "${r.name}" created through the admin API or the dashboard is not in force: ${file} has a combo or alias of that name, which wins; rename or delete one of them`
        : `the ${r.kind} "${r.name}" created through the admin API or the dashboard is not in force: ${r.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
  }));
}

/**
 * The stored combos and aliases a file edit put out of force (`why: "invalid"`), for the routing table
 * (pipeline/resolve.ts `RoutingTable.outOfForce`): name → kind and the loader's issues in one sentence
 * (`targets[0].account: …`), so a request for one is refused naming it and why instead of being guessed
 * as a model of that name. Shadowed ones are left out: the file's object of that name is in force.
 */
export function outOfForce(cfg: Pick<RuntimeConfig, "stored">): Map<string, { kind: "combo" | "alias"; why: string }> {
  const out = new Map<string, { kind: "combo" | "alias"; why: string }>();
  for (const r of cfg.stored?.rejected ?? []) {
    if (r.why !== "invalid" || r.kind === "setting") continue;
    out.set(r.name, { kind: r.kind, why: r.issues.map((i) => `${i.path}: ${i.message}`).join("; ") });
  }
  return out;
}
