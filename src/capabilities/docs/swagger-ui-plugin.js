// Runs in the browser on /docs, loaded by the page before Swagger UI starts (a classic script, not a module).
// A Swagger UI plugin that reads the operations' vendor extensions from the served document, so a new
// operation gets the same treatment by changing the document alone:
//   x-hideTryItPanel: true      -> no "Try it out" / "Execute" for that operation
//   deprecated: true            -> a "deprecated" marker in the summary, with
//   x-deprecated-sunset: <date>    the removal date beside it
//   x-stability: <word>         -> a marker with that word ("experimental", "beta")
'use strict'

globalThis.petstoreSwaggerUiPlugin = function petstoreSwaggerUiPlugin (system) {
  const h = system.React.createElement

  // the unresolved operation: summaries render before Swagger UI resolves an operation's $refs
  function operationOf (path, method) {
    return system.specSelectors.specJson().getIn(['paths', path, method])
  }

  function marker (kind, text) {
    const colour = kind === 'deprecated' ? '#b00020' : '#8a5300'
    return h('span', {
      key: kind,
      className: `petstore-marker petstore-marker-${kind}`,
      'data-marker': kind,
      style: { marginLeft: '8px', padding: '1px 6px', border: `1px solid ${colour}`, borderRadius: '4px', color: colour, fontSize: '12px', fontWeight: 'bold', whiteSpace: 'nowrap' }
    }, text)
  }

  function markersFor (operation) {
    if (operation === undefined) return []
    const markers = []
    if (operation.get('deprecated') === true) {
      const sunset = operation.get('x-deprecated-sunset')
      markers.push(marker('deprecated', typeof sunset === 'string' ? `deprecated, sunset ${sunset}` : 'deprecated'))
    }
    const stability = operation.get('x-stability')
    if (typeof stability === 'string') markers.push(marker('stability', stability))
    return markers
  }

  return {
    statePlugins: {
      spec: {
        wrapSelectors: {
          // Swagger UI's own hook for "may this operation be tried out"; without it neither button renders
          allowTryItOutFor: (original) => (state, path, method) =>
            original(state, path, method) && operationOf(path, method)?.get('x-hideTryItPanel') !== true
        }
      }
    },
    wrapComponents: {
      OperationSummaryPath: (Original) => (props) => {
        const path = props.operationProps.get('path')
        const method = props.operationProps.get('method')
        return h(system.React.Fragment, null, h(Original, props), ...markersFor(operationOf(path, method)))
      }
    }
  }
}
