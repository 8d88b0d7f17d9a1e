import { describe, expect, it } from "vitest";
import { defaultRegistry } from "../../../commands/index.js";
import { tokenize } from "../../../commands/grammar.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";

describe("tokenize", () => {
  it("splits on spaces and groups quotes, including Slack's smart quotes", () => {
    expect(tokenize(`finalize ingress/x -n myapp --reason "cause confirmed"`)).toEqual([
      "finalize",
      "ingress/x",
      "-n",
      "myapp",
      "--reason",
      "cause confirmed",
    ]);
    expect(tokenize("a \u201Cb c\u201D")).toEqual(["a", "b c"]);
  });

  it("rejects an unclosed quote", () => {
    expect(() => tokenize('a "b')).toThrow(UnstuckError);
  });
});

describe("registry", () => {
  const registry = defaultRegistry();

  it("suggests the nearest verb for a typo, and nothing for a far-off word", () => {
    expect(() => registry.parse("nss myapp")).toThrow(/Did you mean `ns myapp`\?/);
    expect(() => registry.parse("orphan")).toThrow(/Did you mean `orphans`\?/);
    expect(() => registry.parse("rollback everything")).toThrow(/^Unknown command "rollback"\.$/);
  });

  it("fills in missing or mistyped sub-words in the suggestion, keeping what was typed", () => {
    const message = (text: string): string => {
      try {
        registry.parse(text);
      } catch (err) {
        expect(err).toBeInstanceOf(UnstuckError);
        expect((err as UnstuckError).code).toBe(ErrorCode.UnknownCommand);
        return (err as Error).message;
      }
      throw new Error(`"${text}" parsed`);
    };
    // The suggestion comes with its one usage line (never the whole help).
    expect(message("preflight myapp")).toBe(
      "`preflight myapp` is not a complete command. Did you mean `preflight delete ns myapp`? Usage: `preflight delete ns <namespace>`",
    );
    expect(message("preflight delete myapp")).toContain("Did you mean `preflight delete ns myapp`?");
    expect(message("approve-delete myapp --reason x")).toContain(
      "Did you mean `approve-delete ns myapp --reason x`?",
    );
    // A mistyped verb with a missing sub-word: the full canonical form, not the shortcut alias.
    expect(message("wach myapp")).toBe(
      'Unknown command "wach". Did you mean `watch ns myapp`? Usage: `watch ns <namespace>`',
    );
    expect(message("diagnose namspace myapp")).toContain("Did you mean `diagnose namespace myapp`?");
    // Every suggestion parses.
    for (const line of ["preflight delete ns myapp", "watch ns myapp", "diagnose namespace myapp"]) {
      expect(() => registry.parse(line)).not.toThrow();
    }
    // What was typed is quoted back bounded.
    expect(message(`preflight ${"x".repeat(500)}`).length).toBeLessThan(300);
  });

  it("`watch myapp` means `watch ns myapp`", () => {
    expect(registry.parse("watch myapp").input).toEqual(registry.parse("watch ns myapp").input);
  });

  it("routes the long form and the short form to the same command", () => {
    expect(registry.parse("ns myapp")).toEqual(registry.parse("diagnose namespace myapp"));
    expect(registry.parse("ns myapp").input).toEqual({ namespace: "myapp", all: false });
    expect(registry.parse("ns myapp --all").input).toEqual({ namespace: "myapp", all: true });
  });

  it.each([["My_App"], ["-bad"], ["a".repeat(64)], ["ns.with.dots"]])(
    "refuses the invalid name %s",
    (name) => {
      try {
        registry.parse(`ns ${name}`);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(UnstuckError);
        expect(
          (err as UnstuckError).code === ErrorCode.InvalidName ||
            (err as UnstuckError).code === ErrorCode.BadInput,
        ).toBe(true);
      }
    },
  );

  it("names what is missing or unexpected", () => {
    expect(() => registry.parse("ns")).toThrow(/Missing <namespace>/);
    expect(() => registry.parse("ns a b")).toThrow(/Unexpected argument "b"/);
    expect(() => registry.parse("ns a --bogus")).toThrow(/Unknown option --bogus/);
  });

  it("answers an unknown command with an error and the help", async () => {
    const result = await registry.dispatch("frobnicate", {
      actor: { userId: "U1", teamId: "T1", surface: "cli" },
      services: { kube: {} as never, now: () => new Date(), log: { error: () => undefined } as never },
    });
    expect(result.type).toBe("error");
    if (result.type !== "error") return;
    expect(result.error.code).toBe(ErrorCode.UnknownCommand);
    expect(result.help?.entries.map((e) => e.usage.split(" ")[0])).toContain("ns");
  });

  it("answers a typo with the suggestion and its usage line, without the whole help", async () => {
    const result = await registry.dispatch("nss myapp", {
      actor: { userId: "U1", teamId: "T1", surface: "cli" },
      services: { kube: {} as never, now: () => new Date(), log: { error: () => undefined } as never },
    });
    expect(result.type).toBe("error");
    if (result.type !== "error") return;
    expect(result.error.message).toBe(
      'Unknown command "nss". Did you mean `ns myapp`? Usage: `ns <namespace> [--all]`',
    );
    expect(result.help).toBeUndefined();
  });

  it("takes an unquoted reason up to the next option, as people type it in Slack", () => {
    const { input } = registry.parse(
      "repoint test.example.com --reason the old ALB is gone --to k8s-myapp-web-0123456789",
    );
    expect(input).toMatchObject({ reason: "the old ALB is gone", to: "k8s-myapp-web-0123456789" });
    const quoted = registry.parse('finalize ingress/web -n myapp --reason "cause confirmed, recovery first"');
    expect(quoted.input).toMatchObject({ reason: "cause confirmed, recovery first" });
    // A value that is itself an option is no reason.
    expect(() => registry.parse("repoint test.example.com --reason --to x")).toThrow(
      /--reason needs a value/,
    );
  });

  it("gives one command's help for `help <command>` and `<command> --help`, and refuses an unknown one", async () => {
    const ctx = {
      actor: { userId: "U1", teamId: "T1", surface: "cli" as const },
      services: { kube: {} as never, now: () => new Date(), log: { error: () => undefined } as never },
    };
    for (const text of ["help repoint", "repoint --help", "repoint test.example.com -h"]) {
      const result = await registry.dispatch(text, ctx);
      expect(result.type, text).toBe("help");
      if (result.type !== "help") continue;
      expect(result.help.entries.map((e) => e.usage.split(" <")[0])).toEqual(["repoint", "repoint ns"]);
      expect(result.help.entries[0]?.examples.length).toBeGreaterThan(0);
    }
    const ns = await registry.dispatch("help trace ns", ctx);
    expect(ns.type === "help" ? ns.help.entries.map((e) => e.usage) : []).toEqual([
      "trace ns <namespace> [--probe]",
    ]);
    const unknown = await registry.dispatch("help frobnicate", ctx);
    expect(unknown.type).toBe("error");
    if (unknown.type === "error")
      expect(unknown.error.message).toMatch(/No command starts with `frobnicate`/);
  });

  it("generates help from the same declarations the parser uses", () => {
    const help = registry.help("/unstuck");
    const ns = help.entries.find((e) => e.usage.startsWith("ns "));
    expect(ns?.usage).toBe("ns <namespace> [--all]");
    expect(ns?.flags.map((f) => f.flag)).toContain("--all");
    expect(ns?.aliases).toContain("diagnose namespace");
    // every example in the help parses
    for (const e of help.entries) for (const ex of e.examples) expect(() => registry.parse(ex)).not.toThrow();
  });

  it("refuses to watch a namespace that is not being deleted, and to finalize from a terminal", async () => {
    const kube = {
      getNamespace: (name: string) =>
        Promise.resolve({
          name,
          phase: "Active",
          specFinalizers: ["kubernetes"],
          finalizers: [],
          conditions: [],
          labels: {},
          annotations: {},
        }),
      // Asked for beside the namespace (a Terminating one would need it next).
      discover: () => Promise.resolve({ resources: [], failures: [] }),
    };
    const ctx = {
      actor: { userId: "cli:me", teamId: "local", surface: "cli" as const },
      services: { kube: kube as never, now: () => new Date(), log: { error: () => undefined } as never },
    };
    const watched = await registry.dispatch("watch ns default", ctx);
    expect(watched.type === "error" && watched.error.code).toBe(ErrorCode.InvalidState);
    expect(watched.type === "error" && watched.error.message).toMatch(/not being deleted/);
    const finalized = await registry.dispatch(
      'finalize ingress/x -n myapp --reason "cause confirmed here"',
      ctx,
    );
    expect(finalized.type === "error" && finalized.error.message).toMatch(/in Slack/);
  });

  it("refuses a finalize request by policy before reading the cluster", async () => {
    const calls: string[] = [];
    const kube = new Proxy(
      {},
      { get: (_t, name) => () => (calls.push(String(name)), Promise.reject(new Error("no"))) },
    );
    const ctx = {
      actor: { userId: "U1", teamId: "T1", channelId: "C0OTHER", surface: "slack" as const },
      services: {
        kube: kube as never,
        now: () => new Date(),
        log: { error: () => undefined } as never,
        approvals: {
          audit: {} as never,
          workflow: {
            precheck: () =>
              Promise.reject(new UnstuckError(ErrorCode.ChannelNotAllowed, "not in this channel")),
          } as never,
        },
      },
    };
    const result = await registry.dispatch(
      'finalize ingress/x -n myapp --reason "cause confirmed here"',
      ctx,
    );
    expect(result.type === "error" && result.error.code).toBe(ErrorCode.ChannelNotAllowed);
    expect(calls).toEqual([]);
  });
});
