type plugin = Rig_raw.device

type 'a opener = {
  name : string;
  make : unit -> ('a, string) result;
  device : 'a -> Rig_raw.device;
}

let plugin name = { name; make = (fun () -> Rig_raw.device_open name); device = Fun.id }

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
