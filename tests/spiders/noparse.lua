-- defines no parse
function pars(response) end
