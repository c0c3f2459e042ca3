// The price arrives; init is the ad hoc synchronisation that guards y.
y = { g: 42 };
init = true;
