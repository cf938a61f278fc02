// The layering of src/ (docs/architecture.md, "The layers"; from the team's shared style guide, kept outside this repository):
//   src/bin/ → src/app.ts → src/capabilities/<name>/ → src/infra/<name>/
// `npm run lint:layers` (scripts/lint-layers.js) cruises src/ with these rules and, on the same cruise, fails
// on any cycle between units (one folder src/infra/<name> or src/capabilities/<name>, subfolders included),
// which no rule here can express. `npx depcruise src` checks these rules alone.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'infra-not-to-capabilities',
      severity: 'error',
      comment: 'Infrastructure sits below the capabilities: it never imports a capability or the composition root ' +
        '(nor an entry point: not-to-bin).',
      from: { path: '^src/infra/' },
      to: { path: '^src/(capabilities/|app\\.ts$)' }
    },
    {
      name: 'capability-through-index',
      severity: 'error',
      comment: 'A capability uses another capability only through its public face, src/capabilities/<other>/index.ts.',
      from: { path: '^src/capabilities/([^/]+)/' },
      to: { path: '^src/capabilities/[^/]+/', pathNot: ['^src/capabilities/$1/', '^src/capabilities/[^/]+/index\\.ts$'] }
    },
    {
      name: 'capabilities-are-folders',
      severity: 'error',
      comment: 'Every module under src/capabilities/ belongs to one capability folder: a file beside the folders is no ' +
        'capability, and would be a way round capability-through-index.',
      from: { path: '^src/' },
      to: { path: '^src/capabilities/[^/]+$' }
    },
    {
      name: 'capabilities-are-folders',
      severity: 'error',
      comment: 'A module beside the capability folders reaches into a capability past its index.ts.',
      from: { path: '^src/capabilities/[^/]+$' },
      to: { path: '^src/capabilities/[^/]+/', pathNot: '^src/capabilities/[^/]+/index\\.ts$' }
    },
    {
      name: 'entry-points-through-faces',
      severity: 'error',
      comment: 'The composition root and the entry points use a capability through its faces only: index.ts (what the app ' +
        'registers and other capabilities use) and cli.ts (its npx petstore commands).',
      from: { path: '^src/(bin/|app\\.ts$)' },
      to: { path: '^src/capabilities/[^/]+/', pathNot: '^src/capabilities/[^/]+/(index|cli)\\.ts$' }
    },
    {
      name: 'cli-only-from-bin',
      severity: 'error',
      comment: 'A capability\'s cli.ts is for src/bin/cli.ts: the server (app.ts, other capabilities) never loads command-line code.',
      from: { path: '^src/', pathNot: '^src/bin/' },
      to: { path: '^src/capabilities/([^/]+)/cli\\.ts$', pathNot: '^src/capabilities/$1/' }
    },
    {
      name: 'not-to-bin',
      severity: 'error',
      comment: 'src/bin/ holds the entry points: nothing else in src/ imports them.',
      from: { path: '^src/', pathNot: '^src/bin/' },
      to: { path: '^src/bin/' }
    },
    {
      name: 'capabilities-not-to-app',
      severity: 'error',
      comment: 'src/app.ts composes the capabilities: a capability never imports it.',
      from: { path: '^src/capabilities/' },
      to: { path: '^src/app\\.ts$' }
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'A relative import the cruiser cannot resolve is an edge that the rules above cannot see.',
      from: { path: '^src/' },
      to: { couldNotResolve: true, path: '^\\.\\.?/' }
    }
  ],
  options: {
    // type-only imports count: a type from another unit ties the two together as much as a value does
    tsPreCompilationDeps: true,
    // NodeNext: `./pet-store.js` in the source is ./pet-store.ts
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' }
  }
}
