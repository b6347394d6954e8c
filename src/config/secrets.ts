/**
 * Secret references in the configuration file (SPEC 2.3): a value `env:NAME` reads the environment
 * variable NAME, `file:PATH` reads a file (relative to the config file's folder; `~/` is the home
 * directory; trailing newlines trimmed); any other value is taken literally.
 *
 * Errors name the variable or file, never a value.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/** The environment the loader reads (`process.env` by default; tests pass a plain object). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where secret references are resolved. */
export interface SecretContext {
  env: Env;
  /** Folder `file:` paths are relative to: the config file's folder. */
  baseDir: string;
}

/** The outcome of resolving one secret reference. */
export type SecretResult = { ok: true; value: string; via: string } | { ok: false; message: string };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Resolves `raw` (a literal, `env:NAME` or `file:PATH`). On failure returns a message naming the
 * variable or file (never its content). `via` describes the source for later messages: `env:NAME`,
 * `file:/abs/path` or `inline value`.
 */
export function resolveSecret(raw: string, ctx: SecretContext): SecretResult {
  if (raw.startsWith("env:")) {
    const name = raw.slice(4).trim();
    if (!ENV_NAME.test(name)) return { ok: false, message: `env: needs a variable name (letters, digits, _), e.g. env:MY_KEY` };
    const value = ctx.env[name];
    if (value === undefined) return { ok: false, message: `environment variable ${name} is not set` };
    if (value.trim() === "") return { ok: false, message: `environment variable ${name} is empty` };
    return { ok: true, value, via: `env:${name}` };
  }
  if (raw.startsWith("file:")) {
    const rel = raw.slice(5).trim();
    if (rel === "") return { ok: false, message: `file: needs a path, e.g. file:secrets/key.txt` };
    const home = ctx.env.HOME ?? ctx.env.USERPROFILE;
    const expanded = rel.startsWith("~/") && home ? join(home, rel.slice(2)) : rel;
    const path = isAbsolute(expanded) ? expanded : resolve(ctx.baseDir, expanded);
    let content: string;
    try {
      content = readFileSync(path, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why =
        code === "ENOENT" ? "not found" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
      return { ok: false, message: `cannot read file ${path}: ${why}` };
    }
    const value = content.replace(/(\r?\n)+$/, "");
    if (value.trim() === "") return { ok: false, message: `file ${path} is empty` };
    return { ok: true, value, via: `file:${path}` };
  }
  return { ok: true, value: raw, via: "inline value" };
}
