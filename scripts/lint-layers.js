#!/usr/bin/env node
// `npm run lint:layers`: the layering of src/ (docs/architecture.md, "The layers"; the rule comes from the
// team's shared style guide, kept outside this repository). One cruise of src/ with dependency-cruiser,
// then two checks on it:
// - the rules in .dependency-cruiser.cjs, reported as `depcruise src` reports them;
// - no cycle between units, a unit being one folder src/infra/<name>, src/capabilities/<name> or src/bin,
//   subfolders included (any other module of src/ is a unit of its own). dependency-cruiser's own
//   folder-level cycles (`scope: 'folder'`) would make every subfolder a unit: a cycle that enters a unit
//   through its store/ subfolder would go unseen, and two subfolders of one unit that use each other would
//   fail, so the units are drawn here instead.
// Type-only imports count: a type from another unit ties the two together as much as a value does.
import { fileURLToPath } from 'node:url'
import { cruise, format } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

const CONFIG_FILE = './.dependency-cruiser.cjs'
const UNIT_PATTERN = /^src\/(?:bin|capabilities\/[^/]+|infra\/[^/]+)(?=\/)/

/** The unit a module of src/ belongs to: its unit folder, or the module itself. */
function getUnit (modulePath) {
  return UNIT_PATTERN.exec(modulePath)?.[0] ?? modulePath
}

/** Unit → unit → the imports that make that edge, from the modules of src/ that the cruise found. */
function buildUnitGraph (modules) {
  const graph = new Map()
  for (const { source, dependencies } of modules) {
    if (!source.startsWith('src/')) continue
    const from = getUnit(source)
    if (!graph.has(from)) graph.set(from, new Map())
    for (const { resolved } of dependencies) {
      if (!resolved.startsWith('src/')) continue
      const to = getUnit(resolved)
      if (to === from) continue
      const edges = graph.get(from)
      if (!edges.has(to)) edges.set(to, [])
      edges.get(to).push(`${source} → ${resolved}`)
    }
  }
  return graph
}

/** The strongly connected components of more than one unit (Tarjan): each holds at least one cycle. */
function findCyclicComponents (graph) {
  const index = new Map()
  const lowLink = new Map()
  const stack = []
  const onStack = new Set()
  const components = []
  let counter = 0

  function visit (unit) {
    index.set(unit, counter)
    lowLink.set(unit, counter)
    counter += 1
    stack.push(unit)
    onStack.add(unit)
    for (const next of graph.get(unit)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next)
        lowLink.set(unit, Math.min(lowLink.get(unit), lowLink.get(next)))
      } else if (onStack.has(next)) {
        lowLink.set(unit, Math.min(lowLink.get(unit), index.get(next)))
      }
    }
    if (lowLink.get(unit) === index.get(unit)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== unit)
      if (component.length > 1) components.push(component.sort())
    }
  }

  for (const unit of [...graph.keys()].sort()) {
    if (!index.has(unit)) visit(unit)
  }
  return components
}

/** One shortest cycle through the component's first unit (breadth-first), as the units in order. */
function findShortestCycle (graph, component) {
  const members = new Set(component)
  const start = component[0]
  const previous = new Map([[start, null]])
  const queue = [start]
  while (queue.length > 0) {
    const unit = queue.shift()
    for (const next of graph.get(unit)?.keys() ?? []) {
      if (!members.has(next)) continue
      if (next === start) {
        const path = [unit]
        while (previous.get(path[0]) !== null) path.unshift(previous.get(path[0]))
        return [...path, start]
      }
      if (!previous.has(next)) {
        previous.set(next, unit)
        queue.push(next)
      }
    }
  }
  return [start]
}

function formatComponent (graph, component) {
  const members = new Set(component)
  const lines = [`  error no-unit-cycle: ${component.length} units in one cycle, e.g. ${findShortestCycle(graph, component).join(' → ')}`]
  const mutual = component.flatMap((from) => component
    .filter((to) => from < to && graph.get(from)?.has(to) && graph.get(to)?.has(from))
    .map((to) => `${from} ⇄ ${to}`))
  if (mutual.length > 0) lines.push('      units that import each other:', ...mutual.map((pair) => `        ${pair}`))
  lines.push('      the imports between units of the cycle:')
  for (const from of component) {
    for (const [to, imports] of graph.get(from) ?? []) {
      if (!members.has(to)) continue
      lines.push(`        ${from} → ${to} (${imports.length}): ${imports[0]}${imports.length > 1 ? ', …' : ''}`)
    }
  }
  return lines.join('\n')
}

process.chdir(fileURLToPath(new URL('..', import.meta.url)))
const options = await extractDepcruiseOptions(CONFIG_FILE)
const tsConfig = extractTSConfig(options.tsConfig.fileName)
const { output: result } = await cruise(['src'], { ...options, validate: true }, {}, { tsConfig })
const rulesReport = await format(result, { outputType: 'err' })
process.stdout.write(rulesReport.output)

const graph = buildUnitGraph(result.modules)
const components = findCyclicComponents(graph)
if (components.length > 0) {
  console.log(components.map((component) => formatComponent(graph, component)).join('\n\n'))
  console.log(`\nx ${components.length} cycle(s) between units (src/infra/<name>, src/capabilities/<name>, src/bin), ${graph.size} units.`)
} else {
  console.log(`✔ no cycle between units: ${graph.size} units.`)
}
process.exitCode = rulesReport.exitCode > 0 || components.length > 0 ? 1 : 0
