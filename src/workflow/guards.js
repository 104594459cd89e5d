// Determinism guards, evaluated before any workflow code. A workflow must make the same
// decisions when it runs again with the same arguments, so the clock and the random number
// generator are not available; pass times and choices in through `args` instead.
(function () {
  "use strict";
  const no = (what) =>
    function () {
      throw new Error(
        what +
          " is not available in workflows: a workflow must be deterministic. Pass times and random choices in through args."
      );
    };
  Math.random = no("Math.random()");
  const RealDate = Date;
  RealDate.now = no("Date.now()");
  const SafeDate = new Proxy(RealDate, {
    apply: no("Date()"),
    construct(target, args, newTarget) {
      if (args.length === 0) no("new Date() without arguments")();
      return Reflect.construct(target, args, newTarget === SafeDate ? target : newTarget);
    },
  });
  Object.defineProperty(RealDate.prototype, "constructor", { value: SafeDate, writable: true, configurable: true });
  globalThis.Date = SafeDate;
})();
