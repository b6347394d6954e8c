/**
 * Long directory listings (`ls -l`, `ls -la`, `ls -lR`, `ls -lh`) for the tool-result compressor
 * (SPEC S-1). Each entry keeps what an agent reads it for, in `ls`'s own order: its mode (with an ACL
 * or extended-attribute mark), owner and group, size (or device numbers), date and name (a symlink's
 * `-> target` included), `.` and `..` too. So a root-owned mode-600 file among user-owned ones still
 * stands out, as it does after a permission error. Elided: the link-count column, the padding that
 * aligns the columns (runs of spaces become one; names are kept byte for byte), the `total` lines, and
 * past {@link MANY} entries in one directory, the entries after the first {@link KEEP} whose mode,
 * owner and group are the most common ones of their type in that directory, counted by that mode and
 * owner (`… 412 more entries elided (400 -rw-r--r-- app app, 12 drwxr-xr-x app app)`); a later entry
 * with another mode or owner is kept. Directory headers of `-R` listings are kept. A line holding a
 * client's own cut marker (Codex's `…N chars truncated…`, {@link CLIENT_CUT}) is kept as it is.
 */
import { CLIENT_CUT, count, marker, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** A directory with more entries than this is cut. */
const MANY = 300;
/** Entries kept in a cut directory (besides later ones with another mode or owner). */
const KEEP = 200;

// mode (with its ACL / xattr mark), links, owner, [group], size (or device major, minor), date, name
const ENTRY =
  /^([bcdlps-][rwxsStT-]{9}[.@+]?)\s+\d+\s+((?:\S+\s+){1,2}?)([\d.,]+[KMGTPE]?|\d+,\s*\d+)\s+((?:[A-Z][a-z]{2}\s+\d{1,2}|\d{1,2}\s+[A-Z][a-z]{2})\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: [+-]\d{4})?)?)\s(.*)$/;
const TOTAL = /^total \d+(?:[.,]\d+)?[KMGTPE]?$/;
const HEADER = /^\S.*:$/;

interface Entry {
  /** Mode, owner and group, single-spaced: what the cut compares. */
  key: string;
  /** The entry's line with the link count and the column padding left out. */
  line: string;
}

const oneSpace = (s: string) => s.trim().replace(/\s+/g, " ");

/** The directory-listing rule (see the module doc). */
export const listingRule: SaverRule = {
  name: "listing",
  apply(lines: string[]): RuleOutput | undefined {
    let entries = 0;
    for (const l of lines) {
      if (l === "" || TOTAL.test(l)) continue;
      if (ENTRY.test(l)) entries++;
      // a line joined across a client's own cut (Codex's `…N chars truncated…`) is kept as it is
      else if (!HEADER.test(l) && !CLIENT_CUT.test(l)) return undefined;
    }
    if (entries < 5) return undefined;
    const out: string[] = [];
    let block: Entry[] = [];
    let cut = 0;
    let totals = 0;
    const flush = () => {
      if (block.length > MANY) {
        // The most common mode and owner of each type (the mode's first letter) in this directory.
        const seen = new Map<string, number>();
        for (const e of block) seen.set(e.key, (seen.get(e.key) ?? 0) + 1);
        const common = new Map<string, string>();
        for (const [key, n] of seen) {
          const best = common.get(key[0]!);
          if (best === undefined || n > seen.get(best)!) common.set(key[0]!, key);
        }
        const gone = new Map<string, number>();
        block.forEach((e, i) => {
          if (i < KEEP || common.get(e.key[0]!) !== e.key) out.push(e.line);
          else gone.set(e.key, (gone.get(e.key) ?? 0) + 1);
        });
        const n = [...gone.values()].reduce((a, b) => a + b, 0);
        if (n > 0) {
          cut += n;
          out.push(`${marker(plural(n, "more entry", "more entries"))} (${[...gone].map(([k, c]) => `${count(c)} ${k}`).join(", ")})`);
        }
      } else for (const e of block) out.push(e.line);
      block = [];
    };
    for (const l of lines) {
      if (TOTAL.test(l)) {
        totals++;
        continue;
      }
      const m = ENTRY.exec(l);
      if (m) {
        const key = `${m[1]} ${oneSpace(m[2]!)}`;
        block.push({ key, line: `${key} ${m[3]!.replace(/\s+/g, " ")} ${oneSpace(m[4]!)} ${m[5]}` });
        continue;
      }
      flush();
      out.push(l);
    }
    flush();
    while (out.length > 0 && out[out.length - 1] === "") out.pop();
    const elided = [`link counts and column padding of ${plural(entries, "entry", "entries")}`];
    if (totals > 0) elided.push(plural(totals, "total line"));
    if (cut > 0) elided.push(plural(cut, "entry", "entries") + ` past the first ${count(KEEP)} of a directory with the mode and owner most of it has`);
    return { text: out.join("\n"), elided };
  },
};
