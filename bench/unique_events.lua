-- wrk script: every request is a distinct transfer.success event (unique references).
local threads_started = 0
local salt = tostring(os.time()) .. tostring(math.random(100000, 999999))

function setup(thread)
  thread:set("tid", threads_started)
  threads_started = threads_started + 1
end

function init(args)
  counter = 0
end

function request()
  counter = counter + 1
  local ref = "B" .. salt .. "-" .. tid .. "-" .. counter
  local body = '{"event":"transfer.success","data":{"reference":"' .. ref ..
    '","merchant_reference":"m' .. ref .. '","amount":100000,"status":"successful","fee":1000}}'
  return wrk.format("POST", "/webhook", {["Content-Type"] = "application/json"}, body)
end
