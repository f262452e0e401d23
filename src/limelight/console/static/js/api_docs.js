// The interactive API docs at /docs: Swagger UI (vendored) over /openapi.json.
// A file of its own, not an inline script: the page's policy allows none.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.spec,
    domNode: root,
    deepLinking: true,
    // Keys typed into "Authorize" stay in this tab only.
    persistAuthorization: false,
    // No call to a validator service elsewhere: the document is checked by the tests.
    validatorUrl: null,
  });
})();
