/**
 * Long directory listings (`ls -l`, `ls -la`, `ls -lR`, `ls -lh`) for the tool-result compressor
 * (SPEC S-1). Each entry becomes its name and size: `name/` for a directory (no size), `name*` for an
 * executable file, `name@ -> target` for a symlink, `name  1234` for a file; `.` and `..` are dropped.
 * Kept: every name (in order), sizes, directory headers of `-R` listings. Elided: permissions, link
 * counts, owners, groups, dates, `total` lines, and past {@link MANY} entries in one directory, the
 * rest (`… 412 more entries elided (12 directories, 400 files)`). A line holding a client's own cut
 * marker (Codex's `…N chars truncated…`, {@link CLIENT_CUT}) is kept as it is.
 */
import { CLIENT_CUT, count, marker, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** A directory with more entries than this is cut. */
const MANY = 300;
/** Entries kept in a cut directory. */
const KEEP = 200;

// mode, links, owner, [group], size (or device major, minor), date, name
const ENTRY =
  /^([bcdlps-])([rwxsStT-]{9})[.@+]?\s+\d+\s+(?:\S+\s+){1,2}?([\d.,]+[KMGTPE]?|\d+,\s*\d+)\s+((?:[A-Z][a-z]{2}\s+\d{1,2}|\d{1,2}\s+[A-Z][a-z]{2})\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: [+-]\d{4})?)?)\s(.*)$/;
const TOTAL = /^total \d+(?:[.,]\d+)?[KMGTPE]?$/;
const HEADER = /^\S.*:$/;

interface Entry {
  type: string;
  exec: boolean;
  size: string;
  name: string;
}

function render(e: Entry): string | undefined {
  if (e.type === "d") return e.name === "." || e.name === ".." ? undefined : `${e.name}/`;
  if (e.type === "l") {
    const i = e.name.indexOf(" -> ");
    return i >= 0 ? `${e.name.slice(0, i)}@${e.name.slice(i)}` : `${e.name}@`;
  }
  if (e.type !== "-") return `${e.name} (${e.type === "p" ? "fifo" : e.type === "s" ? "socket" : "device"})`;
  return `${e.name}${e.exec ? "*" : ""}  ${e.size}`;
}

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
    const flush = () => {
      const rendered = block.map((e) => ({ e, r: render(e) })).filter((x) => x.r !== undefined);
      if (rendered.length > MANY) {
        for (const x of rendered.slice(0, KEEP)) out.push(x.r!);
        const rest = rendered.slice(KEEP);
        const dirs = rest.filter((x) => x.e.type === "d").length;
        cut += rest.length;
        out.push(`${marker(plural(rest.length, "more entry", "more entries"))} (${plural(dirs, "directory", "directories")}, ${plural(rest.length - dirs, "other entry", "other entries")})`);
      } else for (const x of rendered) out.push(x.r!);
      block = [];
    };
    for (const l of lines) {
      if (TOTAL.test(l)) continue;
      const m = ENTRY.exec(l);
      if (m) {
        block.push({ type: m[1], exec: "xs".includes(m[2][2]) || "xs".includes(m[2][5]) || "xt".includes(m[2][8]), size: m[3], name: m[5] });
        continue;
      }
      flush();
      out.push(l);
    }
    flush();
    while (out.length > 0 && out[out.length - 1] === "") out.pop();
    const elided = [`permissions, owners, dates and totals of ${plural(entries, "entry", "entries")} (dir/ = directory, name* = executable, name@ = symlink, sizes in bytes unless marked)`];
    if (cut > 0) elided.push(plural(cut, "entry", "entries") + ` past the first ${count(KEEP)} of a directory`);
    return { text: out.join("\n"), elided };
  },
};
