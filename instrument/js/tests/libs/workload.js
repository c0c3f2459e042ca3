// Exercises Underscore and Backbone (loaded as earlier scripts) and prints the results; run
// plain and instrumented by tests/libraries.rs, outputs must match.
var out = [];
out.push(_.map([1, 2, 3], function (x) { return x * 2; }).join());
out.push(JSON.stringify(_.groupBy(["one", "two", "three"], "length")));
out.push(_.uniq([1, 2, 1, 3, 2]).join());
out.push(JSON.stringify(_.sortBy([{ n: 3 }, { n: 1 }, { n: 2 }], "n")));
out.push(_.template("hello <%= name %>, <%- esc %>")({ name: "world", esc: "<b>" }));
out.push(JSON.stringify(_.extend({ a: 1 }, { b: 2 }, { a: 3 })));
out.push(String(_.isEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })));
var counter = _.once(function () { return Math.random() < 2 ? "once" : "never"; });
out.push(counter() + counter());
var Todo = Backbone.Model.extend({
  defaults: { title: "", completed: false },
  toggle: function () { this.set("completed", !this.get("completed")); },
});
var Todos = Backbone.Collection.extend({
  model: Todo,
  completed: function () { return this.where({ completed: true }); },
  remaining: function () { return this.where({ completed: false }); },
});
var todos = new Todos();
var events = [];
todos.on("add", function (m) { events.push("add:" + m.get("title")); });
todos.on("change:completed", function (m) { events.push("done:" + m.get("title")); });
todos.on("remove", function (m) { events.push("remove:" + m.get("title")); });
todos.add({ title: "a" });
todos.add({ title: "b" });
todos.add([{ title: "c" }]);
todos.at(1).toggle();
todos.remove(todos.at(0));
out.push(events.join(","));
out.push(todos.completed().length + "/" + todos.remaining().length + "/" + todos.length);
out.push(JSON.stringify(todos.toJSON()));
console.log(out.join("\n"));
