; agentgym built-in ALFWorld game: look_at_obj_in_light
; Your task is to: look at book under the desklamp.
; A hand-written scene in the problem format of ALFWorld's game.tw-pddl files; it is played
; with the alfred.pddl domain and alfred.twl2 grammar that the alfworld package ships.
(define (problem plan_builtin_look_at_obj_in_light)
(:domain alfred)
(:objects
        agent1 - agent
        AlarmClockType - otype
        BookType - otype
        CDType - otype
        CellPhoneType - otype
        CreditCardType - otype
        DeskLampType - otype
        KeyChainType - otype
        LaptopType - otype
        PenType - otype
        PillowType - otype
        BedType - rtype
        DeskType - rtype
        DrawerType - rtype
        DresserType - rtype
        GarbageCanType - rtype
        ShelfType - rtype
        SideTableType - rtype
        AlarmClock_bar__minus_01_dot_98_bar__plus_00_dot_66_bar__minus_00_dot_13 - object
        Book_bar__minus_00_dot_51_bar__plus_00_dot_82_bar__minus_02_dot_01 - object
        Book_bar__minus_00_dot_80_bar__plus_00_dot_56_bar__plus_01_dot_05 - object
        CD_bar__plus_00_dot_09_bar__plus_01_dot_04_bar__minus_01_dot_90 - object
        CellPhone_bar__plus_01_dot_70_bar__plus_00_dot_79_bar__minus_00_dot_61 - object
        CreditCard_bar__plus_01_dot_40_bar__plus_00_dot_21_bar__minus_00_dot_78 - object
        DeskLamp_bar__minus_02_dot_07_bar__plus_00_dot_66_bar__minus_00_dot_31 - object
        KeyChain_bar__plus_00_dot_20_bar__plus_01_dot_04_bar__minus_01_dot_95 - object
        Laptop_bar__minus_00_dot_28_bar__plus_00_dot_82_bar__minus_01_dot_96 - object
        Pen_bar__plus_01_dot_49_bar__plus_00_dot_79_bar__minus_00_dot_35 - object
        Pillow_bar__minus_01_dot_30_bar__plus_00_dot_61_bar__plus_01_dot_52 - object
        Bed_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_20 - receptacle
        Desk_bar__plus_01_dot_58_bar__plus_00_dot_00_bar__minus_00_dot_47 - receptacle
        Drawer_bar__plus_01_dot_38_bar__plus_00_dot_18_bar__minus_00_dot_74 - receptacle
        Drawer_bar__plus_01_dot_38_bar__plus_00_dot_48_bar__minus_00_dot_74 - receptacle
        Dresser_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_01_dot_98 - receptacle
        GarbageCan_bar__plus_01_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_60 - receptacle
        Shelf_bar__plus_00_dot_12_bar__plus_01_dot_02_bar__minus_01_dot_92 - receptacle
        SideTable_bar__minus_02_dot_03_bar__plus_00_dot_00_bar__minus_00_dot_28 - receptacle
        loc_bar_0_bar_1_bar_1_bar_30 - location
        loc_bar_0_bar__minus_5_bar_2_bar_0 - location
        loc_bar_4_bar__minus_3_bar_1_bar_30 - location
        loc_bar_4_bar__minus_3_bar_1_bar_45 - location
        loc_bar_5_bar__minus_2_bar_1_bar_45 - location
        loc_bar_6_bar_5_bar_1_bar_60 - location
        loc_bar__minus_1_bar__minus_5_bar_2_bar_45 - location
        loc_bar__minus_3_bar_4_bar_0_bar_45 - location
        loc_bar__minus_6_bar__minus_1_bar_3_bar_45 - location
        )

(:init
        (receptacleType Bed_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_20 BedType)
        (receptacleType Desk_bar__plus_01_dot_58_bar__plus_00_dot_00_bar__minus_00_dot_47 DeskType)
        (receptacleType Drawer_bar__plus_01_dot_38_bar__plus_00_dot_18_bar__minus_00_dot_74 DrawerType)
        (receptacleType Drawer_bar__plus_01_dot_38_bar__plus_00_dot_48_bar__minus_00_dot_74 DrawerType)
        (receptacleType Dresser_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_01_dot_98 DresserType)
        (receptacleType GarbageCan_bar__plus_01_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_60 GarbageCanType)
        (receptacleType Shelf_bar__plus_00_dot_12_bar__plus_01_dot_02_bar__minus_01_dot_92 ShelfType)
        (receptacleType SideTable_bar__minus_02_dot_03_bar__plus_00_dot_00_bar__minus_00_dot_28 SideTableType)
        (objectType AlarmClock_bar__minus_01_dot_98_bar__plus_00_dot_66_bar__minus_00_dot_13 AlarmClockType)
        (objectType Book_bar__minus_00_dot_51_bar__plus_00_dot_82_bar__minus_02_dot_01 BookType)
        (objectType Book_bar__minus_00_dot_80_bar__plus_00_dot_56_bar__plus_01_dot_05 BookType)
        (objectType CD_bar__plus_00_dot_09_bar__plus_01_dot_04_bar__minus_01_dot_90 CDType)
        (objectType CellPhone_bar__plus_01_dot_70_bar__plus_00_dot_79_bar__minus_00_dot_61 CellPhoneType)
        (objectType CreditCard_bar__plus_01_dot_40_bar__plus_00_dot_21_bar__minus_00_dot_78 CreditCardType)
        (objectType DeskLamp_bar__minus_02_dot_07_bar__plus_00_dot_66_bar__minus_00_dot_31 DeskLampType)
        (objectType KeyChain_bar__plus_00_dot_20_bar__plus_01_dot_04_bar__minus_01_dot_95 KeyChainType)
        (objectType Laptop_bar__minus_00_dot_28_bar__plus_00_dot_82_bar__minus_01_dot_96 LaptopType)
        (objectType Pen_bar__plus_01_dot_49_bar__plus_00_dot_79_bar__minus_00_dot_35 PenType)
        (objectType Pillow_bar__minus_01_dot_30_bar__plus_00_dot_61_bar__plus_01_dot_52 PillowType)
        (canContain BedType BookType)
        (canContain BedType CellPhoneType)
        (canContain BedType LaptopType)
        (canContain BedType PillowType)
        (canContain DeskType AlarmClockType)
        (canContain DeskType BookType)
        (canContain DeskType CDType)
        (canContain DeskType CellPhoneType)
        (canContain DeskType CreditCardType)
        (canContain DeskType KeyChainType)
        (canContain DeskType LaptopType)
        (canContain DeskType PenType)
        (canContain DrawerType BookType)
        (canContain DrawerType CDType)
        (canContain DrawerType CellPhoneType)
        (canContain DrawerType CreditCardType)
        (canContain DrawerType KeyChainType)
        (canContain DrawerType PenType)
        (canContain DresserType AlarmClockType)
        (canContain DresserType BookType)
        (canContain DresserType CDType)
        (canContain DresserType CellPhoneType)
        (canContain DresserType CreditCardType)
        (canContain DresserType KeyChainType)
        (canContain DresserType LaptopType)
        (canContain DresserType PenType)
        (canContain GarbageCanType CDType)
        (canContain GarbageCanType PenType)
        (canContain ShelfType AlarmClockType)
        (canContain ShelfType BookType)
        (canContain ShelfType CDType)
        (canContain ShelfType CellPhoneType)
        (canContain ShelfType CreditCardType)
        (canContain ShelfType KeyChainType)
        (canContain ShelfType PenType)
        (canContain SideTableType AlarmClockType)
        (canContain SideTableType BookType)
        (canContain SideTableType CDType)
        (canContain SideTableType CellPhoneType)
        (canContain SideTableType CreditCardType)
        (canContain SideTableType KeyChainType)
        (canContain SideTableType LaptopType)
        (canContain SideTableType PenType)
        (pickupable AlarmClock_bar__minus_01_dot_98_bar__plus_00_dot_66_bar__minus_00_dot_13)
        (pickupable Book_bar__minus_00_dot_51_bar__plus_00_dot_82_bar__minus_02_dot_01)
        (pickupable Book_bar__minus_00_dot_80_bar__plus_00_dot_56_bar__plus_01_dot_05)
        (pickupable CD_bar__plus_00_dot_09_bar__plus_01_dot_04_bar__minus_01_dot_90)
        (pickupable CellPhone_bar__plus_01_dot_70_bar__plus_00_dot_79_bar__minus_00_dot_61)
        (pickupable CreditCard_bar__plus_01_dot_40_bar__plus_00_dot_21_bar__minus_00_dot_78)
        (pickupable KeyChain_bar__plus_00_dot_20_bar__plus_01_dot_04_bar__minus_01_dot_95)
        (pickupable Laptop_bar__minus_00_dot_28_bar__plus_00_dot_82_bar__minus_01_dot_96)
        (pickupable Pen_bar__plus_01_dot_49_bar__plus_00_dot_79_bar__minus_00_dot_35)
        (pickupable Pillow_bar__minus_01_dot_30_bar__plus_00_dot_61_bar__plus_01_dot_52)
        (openable Drawer_bar__plus_01_dot_38_bar__plus_00_dot_18_bar__minus_00_dot_74)
        (openable Drawer_bar__plus_01_dot_38_bar__plus_00_dot_48_bar__minus_00_dot_74)
        (atLocation agent1 loc_bar_0_bar_1_bar_1_bar_30)
        (toggleable DeskLamp_bar__minus_02_dot_07_bar__plus_00_dot_66_bar__minus_00_dot_31)
        (inReceptacle AlarmClock_bar__minus_01_dot_98_bar__plus_00_dot_66_bar__minus_00_dot_13 SideTable_bar__minus_02_dot_03_bar__plus_00_dot_00_bar__minus_00_dot_28)
        (inReceptacle Book_bar__minus_00_dot_51_bar__plus_00_dot_82_bar__minus_02_dot_01 Dresser_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_01_dot_98)
        (inReceptacle Book_bar__minus_00_dot_80_bar__plus_00_dot_56_bar__plus_01_dot_05 Bed_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_20)
        (inReceptacle CD_bar__plus_00_dot_09_bar__plus_01_dot_04_bar__minus_01_dot_90 Shelf_bar__plus_00_dot_12_bar__plus_01_dot_02_bar__minus_01_dot_92)
        (inReceptacle CellPhone_bar__plus_01_dot_70_bar__plus_00_dot_79_bar__minus_00_dot_61 Desk_bar__plus_01_dot_58_bar__plus_00_dot_00_bar__minus_00_dot_47)
        (inReceptacle CreditCard_bar__plus_01_dot_40_bar__plus_00_dot_21_bar__minus_00_dot_78 Drawer_bar__plus_01_dot_38_bar__plus_00_dot_18_bar__minus_00_dot_74)
        (inReceptacle DeskLamp_bar__minus_02_dot_07_bar__plus_00_dot_66_bar__minus_00_dot_31 SideTable_bar__minus_02_dot_03_bar__plus_00_dot_00_bar__minus_00_dot_28)
        (inReceptacle KeyChain_bar__plus_00_dot_20_bar__plus_01_dot_04_bar__minus_01_dot_95 Shelf_bar__plus_00_dot_12_bar__plus_01_dot_02_bar__minus_01_dot_92)
        (inReceptacle Laptop_bar__minus_00_dot_28_bar__plus_00_dot_82_bar__minus_01_dot_96 Dresser_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_01_dot_98)
        (inReceptacle Pen_bar__plus_01_dot_49_bar__plus_00_dot_79_bar__minus_00_dot_35 Desk_bar__plus_01_dot_58_bar__plus_00_dot_00_bar__minus_00_dot_47)
        (inReceptacle Pillow_bar__minus_01_dot_30_bar__plus_00_dot_61_bar__plus_01_dot_52 Bed_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_20)
        (receptacleAtLocation Bed_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_20 loc_bar__minus_3_bar_4_bar_0_bar_45)
        (receptacleAtLocation Desk_bar__plus_01_dot_58_bar__plus_00_dot_00_bar__minus_00_dot_47 loc_bar_5_bar__minus_2_bar_1_bar_45)
        (receptacleAtLocation Drawer_bar__plus_01_dot_38_bar__plus_00_dot_18_bar__minus_00_dot_74 loc_bar_4_bar__minus_3_bar_1_bar_45)
        (receptacleAtLocation Drawer_bar__plus_01_dot_38_bar__plus_00_dot_48_bar__minus_00_dot_74 loc_bar_4_bar__minus_3_bar_1_bar_30)
        (receptacleAtLocation Dresser_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_01_dot_98 loc_bar__minus_1_bar__minus_5_bar_2_bar_45)
        (receptacleAtLocation GarbageCan_bar__plus_01_dot_95_bar__plus_00_dot_00_bar__plus_01_dot_60 loc_bar_6_bar_5_bar_1_bar_60)
        (receptacleAtLocation Shelf_bar__plus_00_dot_12_bar__plus_01_dot_02_bar__minus_01_dot_92 loc_bar_0_bar__minus_5_bar_2_bar_0)
        (receptacleAtLocation SideTable_bar__minus_02_dot_03_bar__plus_00_dot_00_bar__minus_00_dot_28 loc_bar__minus_6_bar__minus_1_bar_3_bar_45)
        (objectAtLocation AlarmClock_bar__minus_01_dot_98_bar__plus_00_dot_66_bar__minus_00_dot_13 loc_bar__minus_6_bar__minus_1_bar_3_bar_45)
        (objectAtLocation Book_bar__minus_00_dot_51_bar__plus_00_dot_82_bar__minus_02_dot_01 loc_bar__minus_1_bar__minus_5_bar_2_bar_45)
        (objectAtLocation Book_bar__minus_00_dot_80_bar__plus_00_dot_56_bar__plus_01_dot_05 loc_bar__minus_3_bar_4_bar_0_bar_45)
        (objectAtLocation CD_bar__plus_00_dot_09_bar__plus_01_dot_04_bar__minus_01_dot_90 loc_bar_0_bar__minus_5_bar_2_bar_0)
        (objectAtLocation CellPhone_bar__plus_01_dot_70_bar__plus_00_dot_79_bar__minus_00_dot_61 loc_bar_5_bar__minus_2_bar_1_bar_45)
        (objectAtLocation CreditCard_bar__plus_01_dot_40_bar__plus_00_dot_21_bar__minus_00_dot_78 loc_bar_4_bar__minus_3_bar_1_bar_45)
        (objectAtLocation DeskLamp_bar__minus_02_dot_07_bar__plus_00_dot_66_bar__minus_00_dot_31 loc_bar__minus_6_bar__minus_1_bar_3_bar_45)
        (objectAtLocation KeyChain_bar__plus_00_dot_20_bar__plus_01_dot_04_bar__minus_01_dot_95 loc_bar_0_bar__minus_5_bar_2_bar_0)
        (objectAtLocation Laptop_bar__minus_00_dot_28_bar__plus_00_dot_82_bar__minus_01_dot_96 loc_bar__minus_1_bar__minus_5_bar_2_bar_45)
        (objectAtLocation Pen_bar__plus_01_dot_49_bar__plus_00_dot_79_bar__minus_00_dot_35 loc_bar_5_bar__minus_2_bar_1_bar_45)
        (objectAtLocation Pillow_bar__minus_01_dot_30_bar__plus_00_dot_61_bar__plus_01_dot_52 loc_bar__minus_3_bar_4_bar_0_bar_45)
        )

    (:goal
         (and
             (exists (?ot - object
                      ?r - receptacle
                      ?a - agent
                      ?l - location)
                 (and
                     (objectType ?ot DeskLampType)
                     (toggleable ?ot)
                     (isToggled ?ot)
                     (receptacleAtLocation ?r ?l)
                     (atLocation ?a ?l)
                     (inReceptacle ?ot ?r)
                 )
             )
             (exists (?o - object
                      ?a - agent)
                 (and
                     (objectType ?o BookType)
                     (holds ?a ?o)
                 )
             )
         )
    )
)
