// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "dist.*/**", "coverage/**", "eslint.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
      "@typescript-eslint/no-unnecessary-condition": "off",
      "@typescript-eslint/no-confusing-void-expression": "off",
      "@typescript-eslint/no-extraneous-class": "off",
      "no-restricted-syntax": [
        "error",
        { selector: "TSEnumDeclaration", message: "Use as-const objects and unions, not enum." },
      ],
    },
  },
  {
    // One way to bound a wait: src/util/deadline.ts (the diagnosis deadline's shared expiry aside).
    files: ["src/**", "commands/**"],
    ignores: ["src/util/deadline.ts", "src/diagnosis/deadline.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "TSEnumDeclaration", message: "Use as-const objects and unions, not enum." },
        {
          selector: "CallExpression[callee.object.name='Promise'][callee.property.name='race']",
          message: "Bound a wait with withTimeout, orElse or settlesWithin (src/util/deadline.ts).",
        },
      ],
    },
  },
  {
    files: ["test/**", "bench/**"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    // The dependency-cruiser rules (`npm run lint`) and the layer list they are made from: CommonJS
    // files read by depcruise (and by a test), outside the TS project.
    files: [".dependency-cruiser.cjs", "layers.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // The Node.js version check npm runs before the bundle (package.json): CommonJS any old Node
    // runs, outside the TS project.
    files: ["deploy/node-check.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: "commonjs",
      globals: { module: "writable", require: "readonly", process: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // The local Slack console's page script: plain browser JavaScript served as it is (no build).
    files: ["test/sim/slack/console/**/*.js"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: "module" },
  },
);
