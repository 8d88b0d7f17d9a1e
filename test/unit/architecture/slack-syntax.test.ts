/**
 * Slack's words stay in the Slack surface: the engine emits typed events and plain text, `src/slack/`
 * turns them into mrkdwn and Block Kit, and `src/render/` into the terminal's text. So no source file
 * outside those two directories may write Slack syntax in its code: a mention (`<@U…>`), a special
 * mention (`<!here>`, `<!channel>`, `<!date^…>`), an emoji code (`:rotating_light:`) or an emoji
 * itself (`✅`, `⏳`: the words of a status line, which the engine says as a typed event and
 * `src/render/` words), or a `slack.com` address. Comments are not code: the scan reads only the literals of the parsed source (strings,
 * templates, regular expressions), so a comment may still say what a surface does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

/** Where Slack syntax belongs: the Slack surface, and the renderers of text for people. */
const ALLOWED = [/^src\/slack\//, /^src\/render\//];

/**
 * Each form of Slack syntax, as found in the text of a literal (a template's substitutions stand as
 * `\0`; a regular expression's lookbehinds are left out). An emoji code stands as a word among others
 * (`:warning: …`, `… :eyes:`), so the parts of a key or an ARN (`${prefix}:req:${id}`,
 * `aws:cloudformation:stack-name`) are not one, nor is a literal that is nothing but one (`":open:"`,
 * a key's part).
 */
const FORMS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: "mention", pattern: /<@/ },
  { name: "special mention", pattern: /<!/ },
  {
    name: "emoji code",
    pattern: /(?:^|[\s(*_"'`]):[a-z0-9][a-z0-9_+-]*:(?=[\s.,;!?)*_"'`])|[\s(*_"'`]:[a-z0-9][a-z0-9_+-]*:$/,
  },
  { name: "emoji", pattern: /\p{Extended_Pictographic}/u },
  { name: "slack.com address", pattern: /slack\.com/i },
];

export interface Finding {
  readonly line: number;
  readonly form: string;
  readonly text: string;
}

/** The literals of a source file (never its comments), each with its line. */
function literals(source: string): { line: number; text: string }[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: { line: number; text: string }[] = [];
  const at = (node: ts.Node): number => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      out.push({ line: at(node), text: node.text });
    } else if (ts.isTemplateExpression(node)) {
      out.push({
        line: at(node),
        text: [node.head.text, ...node.templateSpans.map((s) => `\0${s.literal.text}`)].join(""),
      });
    } else if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      out.push({ line: at(node), text: node.getText(file).replace(/\(\?<[!=]/g, "(") });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** The Slack syntax written in the code of one source file. */
export function slackSyntaxIn(source: string): Finding[] {
  const found: Finding[] = [];
  for (const { line, text } of literals(source)) {
    for (const { name, pattern } of FORMS) {
      if (pattern.test(text))
        found.push({ line, form: name, text: text.replace(/\0/g, "${…}").slice(0, 120) });
    }
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

describe("Slack syntax stays in src/slack and src/render", () => {
  it("the scan flags each form in code, and nothing in comments, keys or ARNs", () => {
    const fixture = [
      "/** A comment may say `<@U123>`, `<!here>`, :rotating_light: and https://slack.com/api/. */",
      "// so may this one: <!channel> :white_check_mark: acme.slack.com",
      "const key = `${prefix}:req:${id}`;",
      'const open = prefix + ":open:" + target;',
      'const tag = t["aws:cloudformation:stack-name"];',
      "const arn = /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:/;",
      'const at = "08:50:10";',
      "const mention = `<@${voter}> approved.`;",
      'const ping = "<!here> look";',
      "const alarm = `:rotating_light: ${message}`;",
      'const link = "https://slack.com/archives/C1/p1";',
      'const done = "Gone :white_check_mark:";',
      "const name = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;",
      "const mentioned = /^<@([A-Z0-9]+)>/;",
      "// a comment may say ✅ too",
      "const status = `⏳ Namespace ${ns} is still Terminating`;",
    ].join("\n");
    expect(slackSyntaxIn(fixture).map((f) => `${String(f.line)} ${f.form}`)).toEqual([
      "8 mention",
      "9 special mention",
      "10 emoji code",
      "11 slack.com address",
      "12 emoji code",
      "14 mention",
      "16 emoji",
    ]);
  });

  it("holds in src/ and commands/", () => {
    const offenders = ["src", "commands"]
      .flatMap((dir) => sourceFiles(join(ROOT, dir)))
      .map((path) => relative(ROOT, path).split("\\").join("/"))
      .filter((path) => !ALLOWED.some((allowed) => allowed.test(path)))
      .flatMap((path) =>
        slackSyntaxIn(readFileSync(join(ROOT, path), "utf8")).map(
          (f) => `${path}:${String(f.line)} ${f.form}: ${f.text}`,
        ),
      );
    expect(offenders).toEqual([]);
  });
});
