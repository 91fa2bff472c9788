-- pattern_diff.lua — test_luapattern: the sandbox's string.find, match, gmatch and
-- gsub (luapattern.c) against Lua's own (the global orig), over patterns and subjects
-- that use every item of the pattern language, and the errors of bad patterns.
-- Returns the number of differences (each printed).
local pats = {"a", "a*", "a-", "a+", "a?", ".", "%d+", "(%d+)", "()a()", "^a", "a$",
  "[a-c]+", "[^a-c]", "[]]", "[^]]", "[a%-]", "%bxy", "%f[%w]%w+", "(a)(b)%1",
  "(a*(.)%w(%s*))", "^(%a+)=(.-)$", "%%", "x*$", "", "()", "[%a_][%w_]*", "(h)(e)(l)",
  "%s*(%S+)%s*", "[%]]", "a.-b", "(.-)b", "%u%l*", "[0-9a-fA-F]+", "%x%x", "%P+",
  "(()a)", "a+b?c*", ".-$", "^$", "[a-]", "[-a]", "%w-%d", "%b()", "%f[%a]",
  "%f[^%z]", "%z", "[%z]", "%c%g%p%l%u", "$a", "a$b"}
local subs = {"", "a", "aaa", "abc", "xaybxy", "x(a(b)c)y", "hello world", "key=value",
  "aab", "123abc456", "a]b", "a-b-c", "foo_bar baz9", "  lead  trail  ", "cabbage",
  "ab\0cd", "AbCd EfG", "(())", "b", "ababab", "a$b", "\1!xY"}
local function pack(...) return {n = select("#", ...), ...} end
local function show(t)
  local o = {}
  for i = 1, t.n do o[#o + 1] = tostring(t[i]) end
  return table.concat(o, ",")
end
local bad = 0
local function cmp(name, f1, f2, ...)
  local r1, r2 = pack(pcall(f1, ...)), pack(pcall(f2, ...))
  if not r1[1] and not r2[1] then -- both errors: the same message, but for where
    r1 = pack(false, (tostring(r1[2]):gsub("^[^:]*:%d+: ", "")))
    r2 = pack(false, (tostring(r2[2]):gsub("^[^:]*:%d+: ", "")))
  end
  local same = r1.n == r2.n
  for i = 1, r1.n do same = same and r1[i] == r2[i] end
  if not same then
    bad = bad + 1
    print("differs", name, string.format("%q", (...)), string.format("%q", (select(2, ...))),
          show(r1), show(r2))
  end
end
local function all(gm)
  return function(s, p, init)
    local o = {}
    for a, b in gm(s, p, init) do o[#o + 1] = tostring(a) .. "/" .. tostring(b) end
    return table.concat(o, "|")
  end
end
for _, p in ipairs(pats) do
  for _, s in ipairs(subs) do
    for _, init in ipairs({1, 2, -1, -3, 0, 10}) do
      cmp("find", orig.find, string.find, s, p, init)
      cmp("match", orig.match, string.match, s, p, init)
      cmp("gmatch", all(orig.gmatch), all(string.gmatch), s, p, init)
    end
    cmp("find plain", orig.find, string.find, s, p, 1, true)
    cmp("gsub %0", orig.gsub, string.gsub, s, p, "<%0>")
    cmp("gsub %1", orig.gsub, string.gsub, s, p, "<%1>")
    cmp("gsub function", orig.gsub, string.gsub, s, p, function(x) return x:upper() end)
    cmp("gsub table", orig.gsub, string.gsub, s, p, {a = "Z", b = false})
    cmp("gsub max", orig.gsub, string.gsub, s, p, "-", 2)
    cmp("gsub number", orig.gsub, string.gsub, s, p, 7)
  end
end
for _, p in ipairs({"%", "[a", "[^", "(a", "a)", "%1", "%b", "%bx", "%fa", "(()", "%g", "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))"}) do
  cmp("bad find", orig.find, string.find, "abc", p)
  cmp("bad gsub", orig.gsub, string.gsub, "abc", p, "%2")
end
cmp("bad replacement", orig.gsub, string.gsub, "abc", "b", "%x")
cmp("bad value", orig.gsub, string.gsub, "abc", "b", function() return {} end)
cmp("too complex", orig.find, string.find, ("a"):rep(300), ("a?"):rep(300) .. "b")
return bad
