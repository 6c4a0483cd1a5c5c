type plugin = Rig_raw.device

type 'a opener = {
  name : string;
  make : unit -> ('a, string) result;
  device : 'a -> Rig_raw.device;
  on : Rig_raw.device -> ('a, string) result;
  host : string -> ('a, string) result;
}

let no_host name _ = Error (name ^ ": opens no machine's host (Rig_edge.remote does)")

let plugin name =
  { name; make = (fun () -> Rig_raw.device_open name); device = Fun.id;
    on = (fun m -> Rig_raw.device_open_on m name); host = no_host name }

(* A machine's host opens only through Rig.open_host, which names the machine. *)
let remote ?driver ?key_file ?(hang_ms = 0) address =
  let name = Option.value driver ~default:"remote" ^ ":" ^ address in
  let only_host _ = Error (name ^ ": opens a machine's host: Rig.open_host ~machine") in
  { name; make = only_host; device = Fun.id; on = only_host;
    host = (fun machine -> Rig_raw.device_open_host machine driver address key_file hang_ms) }

type 'a io_opener = {
  io_name : string;
  io_make : unit -> ('a, string) result;
  io_device : 'a -> Rig_raw.device;
}

let file ?create ?(read_only = false) ?(durable = false) path =
  let flags =
    (if create <> None then 1 else 0) lor (if read_only then 2 else 0) lor if durable then 4 else 0
  in
  let size = Option.value create ~default:0 in
  {
    io_name = "io:" ^ path;
    io_make = (fun () -> Rig_raw.device_open_io path flags size);
    io_device = Fun.id;
  }

type 'a capability = { key : string; read : nativeint -> 'a }

let capability key read = { key; read }
let c_record key = { key; read = Fun.id }

exception Fault of string

let () = Callback.register_exception "rig_edge.fault" (Fault "")

module Driver = struct
  type bytes = (int, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t
  type part = Copy of { src : bytes; dst : bytes } | Fill of { dst : bytes; pattern : int; size : int }

  (* rig_ml_driver.c reads these fields by position. *)
  type facts = { arch : string; alignment : int; budget : int; cache_bytes : int option }

  type 'h closures = {
    c_open : string -> ('h, string) result;
    c_facts : 'h -> facts;
    c_allocate : 'h -> int -> bytes option;
    c_submit : 'h -> part array -> unit;
    c_stop : 'h -> unit;
  }

  type 'h t = { name : string; table : nativeint; closures : 'h closures }

  external table : string -> nativeint = "rig_ml_driver_table"

  external open_raw : nativeint -> string -> string -> 'h closures -> (Rig_raw.device, string) result
    = "rig_ml_driver_open"

  let make ~name ~open_ ~facts ~allocate ~submit ~stop =
    if name = "" || String.contains name ':' || String.contains name '@' then
      invalid_arg "Rig_edge.Driver.make: a name of no ':' or '@', not empty";
    { name; table = table name;
      closures = { c_open = open_; c_facts = facts; c_allocate = allocate; c_submit = submit; c_stop = stop } }

  let opener d args =
    let name = d.name ^ ":" ^ args in
    let elsewhere _ = Error (name ^ ": an OCaml driver opens devices of this machine only") in
    { name; make = (fun () -> open_raw d.table name args d.closures); device = Fun.id;
      on = elsewhere; host = no_host name }
end
