/* The page's client settings: the JSON the server writes into #sessionlab-client (json_script, as the
 * Content-Security-Policy allows no inline script). `present` is false on a participant page without it:
 * then nothing here runs. */
const element = document.getElementById("sessionlab-client");

export const present = element !== null;
export const cfg = present ? JSON.parse(element.textContent) : {};
