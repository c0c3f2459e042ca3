// Defines the settings boot.js needs.
var settings = { greeting: 'Welcome' };
