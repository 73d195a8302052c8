// Type-aware lint: floating promises and non-exhaustive switches are errors, as in the strictest
// SDKs of this field. Guest code (inside the isolate) may import nothing from Node.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import tseslint from "typescript-eslint";

// Each package is linted through its tsconfig.test.json: one program per package holding its
// sources and tests, with the other packages as their built declarations. (The project service
// would open each package's tsconfig.json too, whose "@rewind/source" condition pulls in every
// dependency's sources: a second, larger program per package, past Node's default heap in all.)
// And each package lints itself (`turbo run lint`), in a process of its own; the root the rest.
const PACKAGES = ["libs", "services"].flatMap((dir) =>
  readdirSync(join(import.meta.dirname, dir))
    .map((name) => `${dir}/${name}`)
    .filter((pkg) => existsSync(join(import.meta.dirname, pkg, "package.json"))),
);
const TYPED_TESTS = ["libs/*", "services/*"].flatMap((dir) => [
  `${dir}/src/**/*.test.ts`,
  `${dir}/test/**/*.ts`,
]);

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "**/*.js",
      "**/*.mjs",
      "examples/**",
      "corpus/**",
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/unbound-method": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  // A package's tsconfig.test.json is the program `turbo run typecheck` checks, so the typed rules
  // cover its tests too (a new package needs one: the parser says so if not).
  ...PACKAGES.map((pkg) => ({
    files: [`${pkg}/src/**/*.ts`, `${pkg}/src/**/*.tsx`, `${pkg}/test/**/*.ts`],
    ignores: ["**/test/fixtures/**"],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: `${pkg}/tsconfig.test.json`,
        tsconfigRootDir: import.meta.dirname,
      },
    },
  })),
  // Linted without type information: the other tests, the fixture scripts (run in the sandbox),
  // benchmarks and scripts, and the script API's declaration, which no build compiles (a script
  // program checks it; see examples/).
  {
    files: [
      "**/*.test.ts",
      "**/test/**/*.ts",
      "load-tests/**/*.ts",
      "scripts/**/*.ts",
      "vitest.config.ts",
      "**/vite.config.ts",
      "libs/sdk/script.d.ts",
    ],
    ignores: TYPED_TESTS,
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ["**/test/fixtures/**/*.ts"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ["libs/sandbox/src/guest/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!\\./|@rewind/core/duration$)",
              message:
                "Guest code runs inside the isolate: it imports only guest files (and the pure @rewind/core/duration).",
            },
          ],
        },
      ],
    },
  },
  {
    // The standard runtime of epochs 2-4 shares epoch 1's guest modules, one folder up.
    files: ["libs/sandbox/src/guest/standard/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!\\./|\\.\\./(?!\\.\\./)|@rewind/core/duration$)",
              message:
                "Guest code runs inside the isolate: it imports only guest files (and the pure @rewind/core/duration).",
            },
          ],
        },
      ],
    },
  },
);
