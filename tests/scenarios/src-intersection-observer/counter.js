// Counts an impression if the offers were seen before this script arrived.
var impressions = offersSeen ? 1 : 0;
