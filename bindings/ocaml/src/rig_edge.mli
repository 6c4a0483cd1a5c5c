(** What opens a device: the openers of the drivers rig loads.

    A driver is a C plugin, librig-driver-NAME.so, found on
    [RIG_DRIVER_PATH] and then in rig's install folder; an opener names one
    of its devices. Drivers are written in C against <rig/edge.h>: this
    module gives no way to write one in OCaml. *)

type plugin
(** A device of a C driver, as its opener's [make] returns it. *)

type 'a opener = private {
  name : string;  (** The name the device opens under: ["DRIVER:ARGS"]. *)
  make : unit -> ('a, string) result;
      (** Opens the device, or returns the one open under [name];
          [Error why] where it cannot be opened. [Rig.open_] calls it. *)
  device : 'a -> Rig_raw.device;
  on : Rig_raw.device -> ('a, string) result;
      (** Opens the device, or returns the one open under [name], on the
          machine of the device given, another machine's; [Rig.open_
          ~machine] calls it. *)
  host : string -> ('a, string) result;
      (** Opens the host of the machine named; [Rig.open_host] calls it.
          [Error] but for {!remote}'s. *)
}

val plugin : string -> plugin opener
(** [plugin "DRIVER:ARGS"] is the opener of the device that driver DRIVER
    opens from ARGS, such as ["memory:M"], ["vulkan:0"] or ["io:/tmp/f"].
    On another machine ([Rig.open_ ~machine]) it opens that machine's
    device of that name, ["CPU"] for its host. *)

val remote : ?driver:string -> ?key_file:string -> ?hang_ms:int -> string -> plugin opener
(** [remote ~key_file address] is the opener of the host of the machine
    whose [rig serve] listens at [address] (["HOST:PORT"]), through the
    driver of other machines [driver] (default ["remote"],
    librig-driver-remote.so), proving the secret in the file [key_file]. A
    request unanswered for [hang_ms] milliseconds (default 0: 30 s) loses
    the machine. Only [Rig.open_host ~machine] opens it: [Rig.open_] is
    [Error]. *)

type 'a io_opener = private {
  io_name : string;
  io_make : unit -> ('a, string) result;
  io_device : 'a -> Rig_raw.device;
}

val file : ?create:int -> ?read_only:bool -> ?durable:bool -> string -> plugin io_opener
(** [file path] opens the file [path] as an io device (rig's io library):
    [~create:n] creates it, or grows it, to [n] bytes; [~read_only] opens
    it for reading; [~durable] makes each write durable when it returns. *)

(** {1 Capabilities}

    A driver declares records under keys of its own, filled when a device
    opens ([rig_edge.h]'s [capability]), such as the remote driver's
    ["remote.machine"], the devices the machine's [rig serve] lists. A
    record is a C struct that the driver's header declares, and its
    functions, where it has some, are C functions that compiled code calls.
    {!Rig.capability} gives one; a key says how OCaml reads it. *)

type 'a capability = private {
  key : string;  (** The driver's key. *)
  read : nativeint -> 'a;  (** Makes the OCaml value from the record's address. *)
}

val capability : string -> (nativeint -> 'a) -> 'a capability
(** [capability key read] reads the record under [key] with [read], which
    gets the record's address (never [0n]): a program's own C stub that
    knows the driver's struct, for instance. *)

val c_record : string -> nativeint capability
(** [c_record key] gives the record's address as it is, for the program's
    C code. The record lives as long as its driver says (the remote
    driver's, until its host is closed). *)
