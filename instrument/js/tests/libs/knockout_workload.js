// Knockout observables, computed values and observable arrays (no DOM).
var vm1 = { first: ko.observable("a"), last: ko.observable("b") };
vm1.full = ko.computed(function () { return vm1.first() + " " + vm1.last(); });
var seen = [];
vm1.full.subscribe(function (v) { seen.push(v); });
vm1.first("x"); vm1.last("y");
var arr = ko.observableArray([1, 2]);
arr.push(3); arr.remove(1);
console.log(vm1.full(), seen.join("|"), arr().join(), ko.toJSON({ a: arr }));
