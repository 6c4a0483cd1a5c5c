(* Rig_raw: the C stubs' types, shared by Rig and Rig_edge. Not part of the
   interface: a program uses Rig and Rig_edge. *)

type device (* a custom block holding a reference to a rig_device *)

external device_open : string -> (device, string) result = "rig_ml_device_open"
external device_open_io : string -> int -> int -> (device, string) result
  = "rig_ml_device_open_io"

(* Other machines (rig_ml_machine.c). *)
external device_open_on : device -> string -> (device, string) result = "rig_ml_device_open_on"

external device_open_host : string -> string option -> string -> string option -> int -> (device, string) result
  = "rig_ml_device_open_host"
