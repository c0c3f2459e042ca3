// React 0.12 components rendered to static markup (no DOM).
var Hello = React.createClass({
  displayName: "Hello",
  getInitialState: function () { return { count: this.props.n }; },
  render: function () {
    return React.createElement("div", { className: "x" }, "Hi ", this.props.name, React.createElement("b", null, this.state.count * 2));
  },
});
console.log(React.renderToStaticMarkup(React.createElement(Hello, { name: "you", n: 21 })));
console.log(React.renderToStaticMarkup(React.createElement("ul", null, [1, 2, 3].map(function (i) { return React.createElement("li", { key: i }, i); }))));
