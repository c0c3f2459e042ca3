// Places a tooltip under the card, if the frame callback measured it already.
var tooltipTop = cardTop === null ? 0 : cardTop + 20;
