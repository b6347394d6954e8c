/**
 * Where a settings file fails to parse (src/cli/parse-position.ts), for setup's refusal: the JSON
 * scan agrees with JSON.parse on what is valid and points at the first byte it cannot take; the TOML
 * search names the line Bun's parser refuses.
 */
import { describe, expect, test } from "bun:test";
import { describeFailure, jsonFailure, tomlFailure } from "../../src/cli/parse-position.ts";

const parses = (t: string) => {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
};

describe("jsonFailure", () => {
  test("agrees with JSON.parse on what is JSON", () => {
    const texts = [
      '{"a": [1, -2.5e+3, 0, true, false, null, "x\\u00e9\\n"], "b": {}}',
      " [] ",
      '"only a string"',
      "{\n}\n",
      '{"a": 1,}',
      "[1 2]",
      "{'a': 1}",
      '{"a": 01}',
      '{"a": 1.}',
      '{"a": .5}',
      '{"a": +1}',
      '{"a": "\\x"}',
      '{"a": "\\u12"}',
      '{"a": "tab\there"}',
      "{} {}",
      "",
      "nul",
      "\uFEFF{}",
    ];
    for (const t of texts) expect([t, jsonFailure(t) === undefined]).toEqual([t, parses(t)]);
  });

  test("line and column of the first byte it cannot take, with what was expected", () => {
    const at = (t: string) => describeFailure(jsonFailure(t)!);
    expect(at('{\n  "env": {\n    "A": "1",\n  }\n}')).toBe("line 4, column 3: expected a property name in double quotes, found '}'");
    expect(at('{"a": 1')).toBe("line 1, column 8: expected ',' or '}', found the end of the file");
    expect(at('{\n "a" 1\n}')).toBe("line 2, column 6: expected ':' after the property name, found '1'");
    expect(at('{"a": "x\ny"}')).toContain("line 1, column 9: expected a closing '\"' before the line ends");
  });
});

describe("tomlFailure", () => {
  test("the line Bun's parser refuses, in its words; a construct left open at the line that opens it", () => {
    expect(tomlFailure('a = 1\nb = "x"\n')).toBeUndefined();
    expect(describeFailure(tomlFailure('a = "x"\nc = 2\na = "y"\n')!)).toBe("line 3: cannot redefine key 'a'");
    expect(tomlFailure('p = 1\nx = [1, 2\ny = 3\n')!.line).toBe(2);
    expect(tomlFailure('a = """\nxx\n"""\nb = 2\nc = ]\n')!.line).toBe(5);
  });
});
