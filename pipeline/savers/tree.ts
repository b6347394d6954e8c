/**
 * `tree` output (Unicode `├── `/`└── `/`│   ` or ASCII `|-- `/`` `-- ``/`|   ` guides) for the
 * tool-result compressor (SPEC S-1). The drawing guides become two spaces per level (the structure is
 * the same; guides cost several tokens per level per line). Kept: the root line, every name up to
 * {@link MANY} children of one directory, the `N directories, M files` summary. Elided: the guides,
 * and in a directory with more than {@link MANY} children, the children after the first {@link KEEP}
 * with their subtrees (`… 120 more entries elided (3 directories, 117 files)`).
 */
import { marker, mostly, plural, type RuleOutput, type SaverRule } from "./common.ts";

/** A directory with more children than this is cut. */
const MANY = 60;
/** Children kept in a cut directory. */
const KEEP = 40;

/** One level of guide: a branch (`├── `, `└── `, `|-- `, `` `-- ``) or a continuation (`│   `, `|   `, four spaces). */
// `tree` pads with no-break spaces (U+00A0) as well as spaces.
const GUIDE = /^(?:[│|][ \u00a0]{3}|[ \u00a0]{4}|[├└|`]──[ \u00a0]|[|`]--[ \u00a0]|[├└]─[ \u00a0])/;
const BRANCH = /[├└|`](?:──|--|─)[ \u00a0]$/;

interface Node {
  depth: number;
  name: string;
  children: Node[];
  /** Lines this node and its subtree take. */
  size: number;
}

/** Splits a tree line into depth and name; undefined when the line has no branch guide. */
function parse(line: string): { depth: number; name: string } | undefined {
  let rest = line;
  let depth = 0;
  let prefix = "";
  for (;;) {
    const m = GUIDE.exec(rest);
    if (!m) break;
    prefix += m[0];
    rest = rest.slice(m[0].length);
    depth++;
    if (BRANCH.test(m[0])) break;
  }
  if (depth === 0 || !BRANCH.test(prefix)) return undefined;
  return { depth, name: rest };
}

/** The tree rule (see the module doc). */
export const treeRule: SaverRule = {
  name: "tree",
  apply(lines: string[]): RuleOutput | undefined {
    if (!mostly(lines, (l) => parse(l) !== undefined, 0.75, 5)) return undefined;
    const out: string[] = [];
    const cut = { lines: 0 };
    // Each maximal run of guide lines is one tree (under the root line before it); other lines (roots,
    // the summary, blank lines) are kept as they are.
    let i = 0;
    while (i < lines.length) {
      if (!parse(lines[i])) {
        out.push(lines[i]);
        i++;
        continue;
      }
      let j = i;
      while (j < lines.length && parse(lines[j])) j++;
      const root = build(lines.slice(i, j));
      if (!root) return undefined;
      emitChildren(root.children, 0, out, cut);
      i = j;
    }
    const elided = ["tree drawing guides (two spaces per level)"];
    if (cut.lines > 0) elided.push(`${plural(cut.lines, "entry", "entries")} in large directories`);
    return { text: out.join("\n"), elided };
  },
};

/** Builds the node tree of a run of guide lines; undefined when a level is skipped (not a tree). */
function build(lines: string[]): Node | undefined {
  const root: Node = { depth: 0, name: "", children: [], size: 0 };
  const stack: Node[] = [root];
  for (const l of lines) {
    const p = parse(l)!;
    while (stack.length > p.depth) stack.pop();
    if (stack.length !== p.depth) return undefined;
    const node: Node = { depth: p.depth, name: p.name, children: [], size: 1 };
    stack[stack.length - 1].children.push(node);
    stack.push(node);
  }
  const sizeOf = (n: Node): number => (n.size = 1 + n.children.reduce((a, c) => a + sizeOf(c), 0));
  for (const c of root.children) sizeOf(c);
  return root;
}

function emitChildren(list: Node[], depth: number, out: string[], cut: { lines: number }): void {
  const emit = (n: Node) => {
    out.push("  ".repeat(n.depth) + n.name);
    emitChildren(n.children, n.depth, out, cut);
  };
  if (list.length <= MANY) {
    for (const c of list) emit(c);
    return;
  }
  for (const c of list.slice(0, KEEP)) emit(c);
  const rest = list.slice(KEEP);
  const dirs = rest.filter((c) => c.children.length > 0).length;
  const lines = rest.reduce((a, c) => a + c.size, 0);
  cut.lines += lines;
  out.push(`${marker(plural(rest.length, "more entry", "more entries"), "  ".repeat(depth + 1))} (${plural(dirs, "non-empty directory", "non-empty directories")}, ${plural(lines, "line")} in all)`);
}
