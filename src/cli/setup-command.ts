/**
 * `switchyard setup claude-code|codex|gemini [--model NAME] [--utility-model NAME] [--dry-run] [--client-key KEY] [--codex-bin PATH]`
 * (SPEC 2.2): reads what the CLI needs from the running gateway (the model's entry in `GET /v1/models`,
 * for Codex its model list), checks the client key the CLI will send, and writes the CLI's own settings
 * (src/cli/setup.ts). Imported by `setup` only (src/main.ts supplies the instance's URL and the output).
 *
 * The client key is `--client-key`, else `--key` (setup's older name for it: for every other command
 * `--key` is the admin key), else `$SWITCHYARD_KEY`, else a placeholder that works from loopback. The
 * admin key setup asks the admin API with is `$SWITCHYARD_ADMIN_KEY`, else the token in the data
 * directory's `instance.json` (src/cli/setup-gateway.ts adminTokenFor).
 */
import { homedir } from "node:os";
import type { CliIo } from "./routing.ts";
import { PLACEHOLDER_KEY, runSetup, setupDir, type SetupModel } from "./setup.ts";
import { undoSetup } from "./setup-undo.ts";
import { adminTokenFor, noAccountsNote, setupModel } from "./setup-gateway.ts";
import { askAdmin, NoAnswer, noAnswerLine, type AdminAnswer } from "./admin-request.ts";
import { GEMINI_CLI_ANSWER_MODELS, GEMINI_CLI_UTILITY_MODELS } from "./gemini-utility-models.ts";

import type { SetupCli as SetupTarget } from "../setup-commands.ts";
import { printable, visible } from "./terminal.ts";
/** One of the CLIs setup writes settings for (src/setup-commands.ts SETUP_CLIS, shared with the dashboard). */
export type { SetupTarget };

/** The options of one `switchyard setup` run, as given on the command line. */
export interface SetupCommandOptions {
  /** The running gateway's base URL (no trailing slash). */
  url: string;
  /** The data directory named by `--data-dir` (or the default): where `instance.json` holds the admin token. */
  dataDir: string;
  /** The client key the CLI will send ({@link setupClientKey}). */
  key: string;
  /** `--model NAME`. */
  model?: string;
  /** `--utility-model NAME` (gemini only): the model of Gemini CLI's utility aliases; default `model`. Checked like `model`. */
  utilityModel?: string;
  /** `--dry-run`: print the diff, write nothing. */
  dryRun: boolean;
  /** `--codex-bin PATH`: the Codex to read its prompt from (else the one on PATH). */
  codexBin?: string;
  /** The instance (found through `instance.json`) was started on port 0: the URL's port is this start's alone. */
  ephemeralPort?: boolean;
}

/** What setup prints and how it stops, plus the line for a gateway address that does not answer (main.ts). */
export interface SetupIo extends CliIo {
  notAnswering: (url: string) => string;
}

/**
 * The client key the CLI will send: `--client-key`, else `--key` (its older name here), else
 * `$SWITCHYARD_KEY`, else {@link PLACEHOLDER_KEY}.
 * @throws Error when `--client-key` and `--key` are both given with different values (which is meant is unclear).
 */
export function setupClientKey(clientKey: string | undefined, key: string | undefined, env: Record<string, string | undefined> = process.env): string {
  if (clientKey !== undefined && key !== undefined && clientKey !== key) {
    throw new Error("setup takes one client key: --client-key and --key (its older name for setup) were both given, with different values; give --client-key alone (the admin key setup asks the gateway with comes from SWITCHYARD_ADMIN_KEY)");
  }
  return clientKey ?? key ?? env.SWITCHYARD_KEY ?? PLACEHOLDER_KEY;
}

/** Calls the admin API at `url` with {@link adminTokenFor}'s token; exits with one line when nothing answers. */
function adminAsker(url: string, dataDir: string, io: SetupIo): (method: string, path: string, body?: unknown) => Promise<AdminAnswer> {
  const token = adminTokenFor(url, dataDir);
  return async (method, path, body) => {
    const answer = (await askAdmin(url, token, method, path, body)) ?? io.fail(io.notAnswering(url));
    return answer instanceof NoAnswer ? io.fail(noAnswerLine(url, answer)) : answer;
  };
}

/**
 * The admin dry run of `name` for the client key setup will write (`POST /admin/api/dry-run` with the key
 * presented as the CLI presents it, so the key's `models` allow-list (SPEC 9.6) is checked as the guard
 * checks it). Exits with one line saying that the key's allow-list leaves the model out, and what to do,
 * when the gateway would answer the CLI's requests for it with 403; else answers the dry run's answer.
 */
async function dryRunForKey(ask: (method: string, path: string, body?: unknown) => Promise<AdminAnswer>, url: string, name: string, key: string, io: SetupIo): Promise<AdminAnswer> {
  // limits: false: a key over its budget or rpm now still gets the settings, which outlive the window
  // (review18 R4: the dry run's 429 for such a key made setup exit saying the model does not route).
  const plan = await ask("POST", "/dry-run", { model: name, request: { messages: [{ role: "user", content: "hi" }] }, headers: { authorization: `Bearer ${key}` }, limits: false });
  const error = (plan.data as { error?: { message?: string; code?: string } })?.error;
  if (plan.status === 403 && error?.code === "model_not_allowed") {
    io.fail(
      `the client key setup was given may not use the model ${name}: the key's models allow-list leaves it out, so the gateway at ${url} would answer every request the CLI sends for it with 403: ${error.message} Pass a key whose allow-list includes ${name} with --client-key (switchyard keys create NAME --models ${name} makes one; a key of the config file gets it under keys[].limits.models), or pick a model this key allows (GET ${url}/v1/models with that key lists them); nothing was written`,
    );
  }
  return plan;
}

/**
 * `setup --model NAME` for a name without a slash (an alias, a combo, a bare model id) that
 * `GET /v1/models/{id}` does not list for `key`. A bare model id the gateway routes (SPEC R-2: the one
 * provider that lists it, else a guess from the name, e.g. `gpt-5-codex`, `claude-sonnet-4-5`: the names
 * the CLIs' users type) is accepted with the limits of the `provider/model` it goes to, and a note
 * saying so: answers that target's `GET /v1/models` entry (`{}` when its provider lists no models) and
 * the note. A name the key's allow-list leaves out is listed for no key that may not use it, so the
 * admin dry run tells that case (exits naming the allow-list, see {@link dryRunForKey}) from a name the
 * gateway does not route at all (exits saying so).
 */
/**
 * The note for an instance started on port 0 (`--port 0` or `server.port: 0`): the URL written has the
 * port that start picked, which the next start will not have.
 */
export function ephemeralPortNote(url: string, target: SetupTarget): string {
  return `note: this instance was started on port 0, so ${url} holds the port it picked for this start: ${target} stops reaching the gateway when it is restarted on another; give it a fixed port (--port P or server.port in the config file) and run switchyard setup ${target} again`;
}

/**
 * `GET {url}{path}` with the client key `key`, as the CLI will send it; a gateway that does not answer
 * (refused, reset, DNS) exits with one line ({@link SetupIo.notAnswering}), never a stack.
 */
async function askGateway(url: string, path: string, key: string, io: SetupIo): Promise<Response> {
  try {
    return await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  } catch {
    return io.fail(io.notAnswering(url));
  }
}

/** `/v1/models/{id}` with each `/`-separated part of a model id encoded. */
const modelPath = (id: string): string => `/v1/models/${id.split("/").map(encodeURIComponent).join("/")}`;

async function unlistedName(url: string, name: string, key: string, dataDir: string, io: SetupIo): Promise<{ entry: Record<string, unknown>; note: string }> {
  const ask = adminAsker(url, dataDir, io);
  const plan = await dryRunForKey(ask, url, name, key, io);
  if (plan.status === 401 || plan.status === 403) {
    io.fail(
      `the gateway at ${url} does not list the model ${name} for the client key setup was given (see GET ${url}/v1/models with that key): it knows no such alias, combo or model, or the key's models allow-list leaves it out; setup cannot ask which (its admin API answered ${plan.status}): set SWITCHYARD_ADMIN_KEY to an admin key, or name the instance with --data-dir DIR; nothing was written`,
    );
  }
  const routed = plan.status === 200 ? (plan.data as { attempts?: Array<{ target: string; accountId: string }>; targets?: Array<{ target: string; providerId: string; model: string }> }) : {};
  const first = routed.attempts?.[0];
  const target = first && routed.targets?.find((t) => `${t.providerId}/${t.model}` === first.target);
  if (!first || !target) io.fail(`the gateway at ${url} does not list the model ${name} (see GET ${url}/v1/models); nothing was written`);
  const id = `${target.providerId}/${target.model}`;
  const res = await askGateway(url, modelPath(id), key, io);
  if (res.ok) return { entry: (await res.json()) as Record<string, unknown>, note: `note: the gateway does not list ${name}, but routes it to ${id} on account ${first.accountId}, so setup writes ${name} with the limits of ${id}` };
  await res.body?.cancel();
  // the provider it goes to lists no models (or not this one): asked as provider/model is
  return { entry: {}, note: await unlistedModel(url, id, key, dataDir, io) };
}

/**
 * `setup --model provider/model` for a name `GET /v1/models/{id}` does not list for `key` (SPEC 2.2): a
 * provider whose config lists no models and that discovered none (a `*-compatible` one such as
 * scripts/demo's `demo-chat`, served through its implicit keyless account) is sent any model name, so
 * the name is accepted when the gateway routes it to an account for that key: asked through the admin
 * API (`GET /providers`, then the dry run of {@link dryRunForKey}). Answers the note to print; exits with
 * one line saying why not and what to do when the provider is unknown, lists its models without this
 * one, the key's allow-list leaves the model out (whether or not its provider lists models), no account
 * can serve it, or the admin API cannot be asked.
 */
async function unlistedModel(url: string, name: string, key: string, dataDir: string, io: SetupIo): Promise<string> {
  const slash = name.indexOf("/");
  const providerId = name.slice(0, slash);
  const model = name.slice(slash + 1);
  const ask = adminAsker(url, dataDir, io);
  const notListed = `the gateway at ${url} does not list the model ${name}`;
  const providers = await ask("GET", "/providers");
  if (providers.status === 401 || providers.status === 403) {
    io.fail(`${notListed}, and setup cannot ask it whether it routes the name (its admin API answered ${providers.status}): set SWITCHYARD_ADMIN_KEY to an admin key (or name the instance with --data-dir DIR), or give the model a combo or alias; nothing was written`);
  }
  if (providers.status !== 200) io.fail(`${notListed}, and its admin API answered ${providers.status} for GET /providers; nothing was written`);
  const list = (providers.data as { providers?: Array<{ id: string; models?: Record<string, unknown>; discoveredModels?: string[] }> }).providers ?? [];
  const p = list.find((x) => x.id === providerId);
  if (!p) io.fail(`${notListed}: it has no provider ${providerId} (its providers: ${list.map((x) => x.id).join(", ") || "none"}; see GET ${url}/v1/models)`);
  const known = [...new Set([...Object.keys(p.models ?? {}), ...(p.discoveredModels ?? [])])];
  if (known.length > 0 && !known.includes(model)) {
    const shown = known.slice(0, 6).join(", ") + (known.length > 6 ? ", …" : "");
    io.fail(`${notListed}: provider ${providerId} lists its models (${shown}) and ${model} is not one of them; pick one, or add ${model} under that provider's models in the config (providers[].models.${model}, with its context_window); nothing was written`);
  }
  const plan = await dryRunForKey(ask, url, name, key, io);
  const error = (plan.data as { error?: { message?: string } })?.error;
  if (plan.status !== 200) io.fail(`${notListed} and does not route it: ${visible(error?.message ?? String(plan.data))}; nothing was written`);
  const first = (plan.data as { attempts?: Array<{ target: string; accountId: string }> }).attempts?.[0];
  const listsNone = known.length === 0 ? `provider ${providerId} lists no models, and ` : "";
  if (!first) io.fail(`${notListed}: ${listsNone}no account of ${providerId} can serve ${name} now (switchyard route ${name} says why); nothing was written`);
  if (known.length > 0) io.fail(`${notListed} for the client key setup was given (GET ${url}/v1/models with that key lists what it may use), though provider ${providerId} lists it; nothing was written`);
  return `note: provider ${providerId} lists no models, so the gateway does not list ${name}; it routes it to ${first.target} on account ${first.accountId}, so setup writes it as given`;
}

/**
 * `--model NAME` (or `--utility-model NAME`) as the gateway knows it for `key`: its `GET /v1/models/{id}`
 * entry's limits, whether it is a combo or an alias, and the note for a name the gateway routes but
 * does not list ({@link unlistedName}, {@link unlistedModel}). Exits with one line when the gateway does
 * not serve it for that key.
 */
async function checkedModel(url: string, name: string, key: string, dataDir: string, io: SetupIo): Promise<{ model: SetupModel; routedName?: string; note?: string }> {
  const res = await askGateway(url, modelPath(name), key, io);
  let entry: { owned_by?: unknown } = {};
  let note: string | undefined;
  if (res.status === 404) {
    await res.body?.cancel();
    if (!name.includes("/")) ({ entry, note } = await unlistedName(url, name, key, dataDir, io));
    // provider/model of a provider that lists no models: served, though not listed (SPEC 2.2)
    else note = await unlistedModel(url, name, key, dataDir, io);
  } else if (!res.ok) io.fail(`the gateway at ${url} answered ${res.status} for the model ${name}${res.status === 401 ? " (pass a client key with --client-key or SWITCHYARD_KEY)" : ""}`);
  else entry = (await res.json()) as { owned_by?: unknown };
  // a combo or alias has the limits of its first target (GET /v1/models names it by owner)
  const routedName = entry.owned_by === "switchyard-combo" ? "a combo" : entry.owned_by === "switchyard-alias" ? "an alias" : undefined;
  return { model: setupModel(name, entry), routedName, note };
}

/**
 * Runs `switchyard setup TARGET` against the gateway at `opts.url` (SPEC 2.2): the model's limits come
 * from its `GET /v1/models/{id}`; the client key (`opts.key`) is checked against the gateway
 * before anything is written. Prints the diff and notes; exits with one line (nothing written) when the
 * key is refused or the model cannot be served for it.
 */
export async function setupCommand(target: SetupTarget, opts: SetupCommandOptions, io: SetupIo): Promise<void> {
  const { url, dataDir, key } = opts;
  const out = io.out;
  // typed here: a call to it ends the control flow (TypeScript needs the annotation to know)
  const fail: (lines: string | readonly string[], code?: number) => never = io.fail;
  // A key the gateway refuses would leave the CLI with nothing but 401s: check it before writing.
  const probe = await askGateway(url, "/v1/models", key, io);
  await probe.body?.cancel();
  if (probe.status === 401) {
    const which = key === PLACEHOLDER_KEY ? "the placeholder key setup writes when none is given" : "the key given";
    fail(`the gateway at ${url} requires a client key and refuses ${which}: pass a valid one with --client-key KEY or SWITCHYARD_KEY (switchyard keys create NAME makes one); nothing was written`);
  }
  let model: SetupModel | undefined;
  /** "a combo" / "an alias" when `--model` names one. */
  let routedName: string | undefined;
  /** The note for a provider/model the gateway routes but does not list ({@link unlistedModel}). */
  let unlistedNote: string | undefined;
  const name = opts.model;
  if (name) ({ model, routedName, note: unlistedNote } = await checkedModel(url, name, key, dataDir, io));
  // --utility-model is checked as --model is: Gemini CLI's helper tasks must reach a model the gateway serves for this key
  const utilityNote = opts.utilityModel !== undefined && opts.utilityModel !== name ? (await checkedModel(url, opts.utilityModel, key, dataDir, io)).note : undefined;
  // Codex reads model metadata only from a catalog file: every model the gateway lists for this key,
  // each with the prompt the installed Codex sends for a model it does not know (it requires one).
  let catalog: SetupModel[] | undefined;
  let codexInstructions: string | undefined;
  if (target === "codex") {
    const bin = opts.codexBin ?? Bun.which("codex") ?? undefined;
    if (!bin) out("note: no codex on PATH (or --codex-bin): no model catalog written, so Codex will print its fallback-metadata warning for gateway models");
    else {
      try {
        const { captureCodexInstructions } = await import("./codex-instructions.ts");
        codexInstructions = await captureCodexInstructions(bin);
      } catch (e) {
        out(`note: could not read Codex's prompt from ${bin} (${visible(e instanceof Error ? e.message.split("\n")[0]! : String(e))}): no model catalog written`);
      }
    }
  }
  if (codexInstructions !== undefined) {
    const res = await askGateway(url, "/v1/models", key, io);
    if (!res.ok) fail(`the gateway at ${url} answered ${res.status} for its model list${res.status === 401 ? " (pass a client key with --client-key or SWITCHYARD_KEY)" : ""}`);
    const list = (await res.json()) as { data?: unknown };
    catalog = (Array.isArray(list.data) ? list.data : []).flatMap((e) => (typeof e === "object" && e !== null && typeof (e as { id?: unknown }).id === "string" ? [setupModel((e as { id: string }).id, e)] : []));
    if (catalog.length === 0) out(`note: the gateway at ${url} lists no models yet (no account serves any): no model catalog written; run switchyard setup codex again once it lists some`);
  }
  const dryRun = opts.dryRun;
  let r;
  try {
    r = runSetup({ target, gatewayUrl: url, key, model, utilityModel: opts.utilityModel, catalog, codexInstructions, home: process.env.HOME || homedir(), codexHome: process.env.CODEX_HOME || undefined, dryRun });
  } catch (e) {
    fail(`switchyard setup: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (utilityNote) r.notes.unshift(utilityNote);
  if (unlistedNote) r.notes.unshift(unlistedNote);
  const utility = opts.utilityModel ?? name;
  if (target === "gemini" && utility !== undefined && r.changes.length > 0) {
    r.notes.push(`note: Gemini CLI's utility tasks (session summaries, next-speaker and loop checks, chat compression) now use ${utility} (modelConfigs.customOverrides)${opts.utilityModel === undefined ? `: several calls per turn, so a dear model costs more and answers slower there; --utility-model NAME names a cheaper one` : ""}; its web search and web fetch tools still ask for Gemini models (they need Google's hosted tools)`);
  }
  if (r.changes.length === 0) {
    out(`${target} already points at ${url}: nothing to change`);
    for (const n of r.notes) out(visible(n));
    if (opts.ephemeralPort) out(ephemeralPortNote(url, target));
    return;
  }
  // The user's own files: their line breaks and tabs kept, ESC/OSC/C1 and bidi controls escaped (printable).
  process.stdout.write(printable(r.diff));
  for (const n of r.notes) out(visible(n));
  if (model && model.contextWindow === undefined) {
    out(
      routedName
        ? `note: the gateway knows no context_window for ${model.id} (${routedName}: the window of its first target's model); set providers[].models.<model>.context_window for that model in its config to size the CLI's compaction`
        : `note: the gateway knows no context_window for ${model.id}; set providers[].models.<id>.context_window in its config to size the CLI's compaction`,
    );
  }
  const undo = `switchyard setup ${target} --undo`;
  for (const b of r.backups) {
    if (b.pointedAlready) out(`backup: ${b.path} (the file as it was: it already pointed at the gateway, so ${undo} will leave it and name setup's settings to remove by hand)`);
    else out(b.original ? `backup: ${b.path} (the file before the first switchyard setup; ${undo} puts it back)` : `backup: ${b.path}`);
  }
  for (const c of r.created) out(`created: ${c} (${undo} removes it)`);
  if (target === "gemini" && !name) {
    const note = await geminiDefaultModelsNote(url, key, dataDir, opts.utilityModel);
    if (note) out(note);
  }
  const none = await noAccountsNote(url, dataDir);
  if (none) out(none);
  if (opts.ephemeralPort) out(ephemeralPortNote(url, target));
  out(dryRun ? "dry run: nothing was written" : `${target} now points at ${url}; to go back to its settings before the first setup: ${undo}`);
}

/**
 * `switchyard setup TARGET --undo [--dry-run]` (src/cli/setup-undo.ts): puts the CLI's settings back as
 * they were before the first setup, keeping files changed since; needs no running gateway. Exits 1
 * when a file was left as it is (the lines say what to do by hand).
 */
export function undoCommand(target: SetupTarget, dryRun: boolean, io: CliIo): void {
  const dir = setupDir(target, process.env.HOME || homedir(), process.env.CODEX_HOME || undefined);
  const r = undoSetup(target, dir, dryRun);
  for (const line of r.lines.slice(0, -1)) io.out(line);
  if (r.done) io.out(r.lines.at(-1)!);
  else io.fail(r.lines.at(-1)!, 1);
}

/**
 * Without `--model`, Gemini CLI asks for its own models by their bare ids ({@link GEMINI_CLI_ANSWER_MODELS},
 * and unless `--utility-model` points its helper tasks elsewhere {@link GEMINI_CLI_UTILITY_MODELS}),
 * which the gateway serves through an account of the built-in `gemini` provider, or of a provider that
 * lists that id under `models:` (R-2), or not at all. Each id is asked of the admin API's dry run
 * (`POST /admin/api/dry-run`, as a Gemini client's request presenting `key`, as {@link dryRunForKey}
 * does): the note names the ids it would send to no account (and those the key's `models` allow-list
 * leaves out), and what to do. `GET /v1/models` cannot tell: an API-key provider configured without
 * `models:` lists nothing though its account serves every id, and a listed `x/gemini-…` serves no bare
 * id. Undefined when every id is served, or the admin API cannot be asked (no admin token, no answer).
 */
async function geminiDefaultModelsNote(url: string, key: string, dataDir: string, utilityModel: string | undefined): Promise<string | undefined> {
  const ids = [...new Set<string>([...GEMINI_CLI_ANSWER_MODELS, ...(utilityModel === undefined ? GEMINI_CLI_UTILITY_MODELS : [])])];
  const token = adminTokenFor(url, dataDir);
  const request = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
  const answers = await Promise.all(ids.map((model) => askAdmin(url, token, "POST", "/dry-run", { model, format: "gemini", request, headers: { authorization: `Bearer ${key}` }, limits: false })));
  const unserved: string[] = [];
  const notAllowed: string[] = [];
  for (const [i, a] of answers.entries()) {
    if (a === undefined || a instanceof NoAnswer) return undefined;
    const error = (a.data as { error?: { code?: string } } | undefined)?.error;
    if (a.status === 403 && error?.code === "model_not_allowed") notAllowed.push(ids[i]!);
    else if (a.status === 404 || (a.status === 200 && ((a.data as { attempts?: unknown[] }).attempts ?? []).length === 0)) unserved.push(ids[i]!);
    else if (a.status !== 200) return undefined; // the admin API refused setup (no admin token) or failed: it cannot tell
  }
  if (unserved.length + notAllowed.length === 0) return undefined;
  const why = [
    ...(unserved.length > 0 ? [`no account serves ${unserved.join(", ")} (an account of the built-in gemini provider would, or of a provider listing the id under models:)`] : []),
    ...(notAllowed.length > 0 ? [`the client key's models allow-list leaves out ${notAllowed.join(", ")}`] : []),
  ].join("; ");
  return (
    `note: no --model given, so Gemini CLI asks for its own models by their bare ids (${ids.join(", ")}), and the gateway at ${url} serves ${unserved.length + notAllowed.length === ids.length ? "none" : "only some"} of them: ` +
    `${why}, so its requests for those fail (switchyard route ID --format gemini says why); ` +
    `run switchyard setup gemini --model NAME (a model, alias or combo the gateway serves), or use gemini -m NAME`
  );
}
