// Type-aware lint: floating promises and non-exhaustive switches are errors, as in the strictest
// SDKs of this field. Guest code (inside the isolate) may import nothing from Node.
import tseslint from "typescript-eslint";

const TYPED_TEST_PACKAGES = ["libs/*", "services/*"];
const TYPED_TESTS = TYPED_TEST_PACKAGES.flatMap((dir) => [
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
  // Tests are outside the build's projects: each package's tsconfig.test.json gives them their
  // types (the same program `turbo run typecheck` checks), so the typed rules cover every
  // package's tests too (a new package needs a tsconfig.test.json: the parser says so if not).
  {
    files: TYPED_TESTS,
    ignores: ["**/test/fixtures/**"],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: ["libs/*/tsconfig.test.json", "services/*/tsconfig.test.json"],
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
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
