// The Assistant command queue stub, snippet version 1.0.0: it buffers calls until the SDK,
// loaded asynchronously after it, takes over and plays them.
(function (w) {
  if (w.Assistant) return;
  var a = function () { a.q.push(arguments); };
  a.q = [];
  a.v = '1.0.0';
  w.Assistant = a;
})(window);
